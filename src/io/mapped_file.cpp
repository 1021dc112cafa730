#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

namespace memsnap::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string read_all(int fd, const std::string& path) {
    std::string out;
    char chunk[1 << 16];
    while (true) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw input_error("cannot read: " + errno_text(), path);
        }
        out.append(chunk, static_cast<std::size_t>(n));
    }
    return out;
}

}  // namespace

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
    if (path_ == "-") {
        buffer_ = read_all(STDIN_FILENO, path_);
        data_ = buffer_.data();
        size_ = buffer_.size();
        return;
    }
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw input_error("cannot open: " + errno_text(), path_);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const auto message = errno_text();
        ::close(fd);
        throw input_error("cannot stat: " + message, path_);
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw input_error("is a directory, not a capture file", path_);
    }
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void* addr = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE,
                            fd, 0);
        if (addr != MAP_FAILED) {
            ::madvise(addr, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
            data_ = static_cast<const char*>(addr);
            size_ = static_cast<std::size_t>(st.st_size);
            mapped_ = true;
            ::close(fd);
            return;
        }
    }
    // Empty files, pipes and special files are read; empty stays empty.
    try {
        buffer_ = read_all(fd, path_);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    data_ = buffer_.data();
    size_ = buffer_.size();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      mapped_(other.mapped_),
      buffer_(std::move(other.buffer_)) {
    if (!mapped_) data_ = buffer_.data();
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapped_ = false;
}

void MappedFile::release_prefix(std::size_t bytes) const noexcept {
    if (!mapped_) return;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t length = std::min(bytes, size_) / page * page;
    if (length > 0) ::madvise(const_cast<char*>(data_), length, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
    if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace memsnap::io
