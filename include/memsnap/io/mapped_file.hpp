#pragma once
// A read-only view of a whole file. Regular files are memory-mapped so that a capture of
// several GB is never copied into memory; other inputs (pipes, devices, "-" for standard
// input) are read, up to a limit. A mapped file that shrinks while it is read (SIGBUS on the
// lost pages) reads zeros instead and says so through changed().

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace memsnap::io {

struct ReadOptions {
    // Inputs that cannot be mapped are read up to this many bytes (--max-input).
    std::uint64_t max_input = std::uint64_t{8} << 30;
    // Called once with the first bytes (up to 64 KiB) before the rest is read, so that an
    // input that cannot be a capture (an endless /dev/zero) is refused at once. May throw.
    std::function<void(std::string_view head)> check_head;
    // Refuse anything but a regular file (for files found in a directory: a FIFO or a device
    // swapped in after the listing is never read).
    bool regular_only = false;
};

class MappedFile {
  public:
    // Opens `path` ("-" reads standard input). Throws memsnap::Error (input) naming the file.
    explicit MappedFile(std::string path, const ReadOptions& options = {});
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&&) = delete;

    std::string_view bytes() const noexcept { return {data_, size_}; }
    // Tells the kernel that the first `bytes` bytes will not be needed soon, so they stop
    // counting towards resident memory; reading them again faults them back in from the file.
    // Does nothing for inputs that were read into memory.
    void release_prefix(std::size_t bytes) const noexcept;
    // True when pages of the mapping vanished while they were read: the file was truncated
    // or replaced under memsnap, and what was read is not the file.
    bool changed() const noexcept;
    const std::string& path() const noexcept { return path_; }

  private:
    std::string path_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
    bool mapped_ = false;
    int guard_ = -1;                    // slot in the SIGBUS guard's table, -1 when not mapped
    std::string buffer_;                // used when the input cannot be mapped
    mutable std::size_t released_ = 0;  // bytes of the mapping already given back
};

}  // namespace memsnap::io
