#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memsnap::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

// ------------------------------------------------------------------ the SIGBUS guard
// Reading a mapped file whose end was cut off raises SIGBUS. The handler maps a page of zeros
// where the lost page was, notes it, and lets the read go on; the loader then reports that
// the file changed instead of dying without a word. Lock-free: a handler may run anywhere.

struct Guarded {
    std::atomic<bool> used{false};
    std::atomic<std::uintptr_t> begin{0}, end{0};
    std::atomic<bool> hit{false};
};
constexpr int kGuardSlots = 16;
Guarded g_guarded[kGuardSlots];
// Files mapped at this moment: several are read at once by as many threads.
std::atomic<int> g_mapped_files{0};
std::atomic<bool> g_installed{false};
struct sigaction g_previous {};

void on_sigbus(int sig, siginfo_t* info, void* context) {
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (auto& g : g_guarded) {
        if (!g.used.load() || address < g.begin.load() || address >= g.end.load()) continue;
        const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
        void* at = reinterpret_cast<void*>(address & ~(page - 1));
        if (::mmap(at, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
            g.hit.store(true);
            return;
        }
    }
    // Not ours: behave as if there were no handler.
    if (g_previous.sa_flags & SA_SIGINFO && g_previous.sa_sigaction != nullptr) {
        g_previous.sa_sigaction(sig, info, context);
        return;
    }
    ::signal(SIGBUS, SIG_DFL);
    ::raise(SIGBUS);
}

int guard(const char* data, std::size_t size) {
    if (!g_installed.exchange(true)) {
        struct sigaction action {};
        action.sa_sigaction = on_sigbus;
        action.sa_flags = SA_SIGINFO;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &g_previous);
    }
    for (int i = 0; i < kGuardSlots; ++i) {
        auto& g = g_guarded[i];
        if (g.used.load() || g.begin.load() != 0) continue;
        // Range first, then `used`: the handler only trusts a range that is complete.
        g.hit.store(false);
        g.begin.store(reinterpret_cast<std::uintptr_t>(data));
        g.end.store(reinterpret_cast<std::uintptr_t>(data) + size);
        g.used.store(true);
        return i;
    }
    return -1;  // more files open at once than slots: unguarded, as before
}

void unguard(int slot) {
    if (slot < 0) return;
    g_guarded[slot].used.store(false);
    g_guarded[slot].end.store(0);
    g_guarded[slot].begin.store(0);
}

// ------------------------------------------------------------------ reading

std::string read_all(int fd, const std::string& path, const ReadOptions& options) {
    std::string out;
    bool checked = false;
    char chunk[1 << 16];
    while (true) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw input_error("cannot read: " + errno_text(), path);
        }
        out.append(chunk, static_cast<std::size_t>(n));
        if (!checked && out.size() >= sizeof chunk && options.check_head) {
            checked = true;
            options.check_head(out);
        }
        if (out.size() > options.max_input)
            throw input_error(fmt::format("more than {} bytes (--max-input); give a larger --max-input to read it",
                                          options.max_input),
                              path);
    }
    if (!checked && options.check_head) options.check_head(out);
    return out;
}

}  // namespace

MappedFile::MappedFile(std::string path, const ReadOptions& options) : path_(std::move(path)) {
    if (path_ == "-") {
        buffer_ = read_all(STDIN_FILENO, path_, options);
        data_ = buffer_.data();
        size_ = buffer_.size();
        return;
    }
    // O_NONBLOCK: opening a FIFO with no writer would block before fstat could refuse it.
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
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
    if (options.regular_only && !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw input_error(S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file", path_);
    }
    // Pipes named on the command line (<(zstdcat …)) are read as they come; a FIFO with no
    // writer then reads as empty instead of waiting.
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
        void* addr = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
        if (addr != MAP_FAILED) {
            ::madvise(addr, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
            data_ = static_cast<const char*>(addr);
            size_ = static_cast<std::size_t>(st.st_size);
            mapped_ = true;
            ++g_mapped_files;
            guard_ = guard(data_, size_);
            ::close(fd);
            if (options.check_head) options.check_head(bytes().substr(0, 1 << 16));
            return;
        }
    }
    // Empty files, pipes and special files are read; empty stays empty.
    try {
        buffer_ = read_all(fd, path_, options);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    if (S_ISFIFO(st.st_mode) && buffer_.empty()) throw input_error("a FIFO that nothing was written to", path_);
    data_ = buffer_.data();
    size_ = buffer_.size();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(other.data_),
      size_(other.size_),
      mapped_(other.mapped_),
      guard_(other.guard_),
      buffer_(std::move(other.buffer_)),
      released_(other.released_) {
    if (!mapped_) data_ = buffer_.data();
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapped_ = false;
    other.guard_ = -1;
}

void MappedFile::release_prefix(std::size_t bytes) const noexcept {
    if (!mapped_) return;
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t length = std::min(bytes, size_) / page * page;
    // Each release flushes the TLBs of every core running this process: with one file read
    // at a time no other core is involved and every step is taken. While several are read by
    // as many threads, longer steps interrupt the others less (a diff of two 478 MB captures:
    // 0.84-0.91 s in 8 MiB steps, 0.90-1.04 s in 1 MiB ones) but keep more of each file in
    // memory (six 84 MB files on 2 cores: 48 MB in 8 MiB steps, 36 MB in 1 MiB ones, against
    // 19 MB for one file): a 128th of the file, within those bounds.
    const std::size_t step = g_mapped_files.load(std::memory_order_relaxed) > 1
                                 ? std::clamp(size_ / 128, std::size_t{1} << 20, std::size_t{8} << 20)
                                 : 0;
    if (length < released_ + step) return;
    // Only what was not released before: the prefix grows as the reader moves on.
    if (length > released_) ::madvise(const_cast<char*>(data_) + released_, length - released_, MADV_DONTNEED);
    released_ = std::max(released_, length);
}

bool MappedFile::changed() const noexcept { return guard_ >= 0 && g_guarded[guard_].hit.load(); }

MappedFile::~MappedFile() {
    unguard(guard_);
    if (mapped_) {
        ::munmap(const_cast<char*>(data_), size_);
        --g_mapped_files;
    }
}

}  // namespace memsnap::io
