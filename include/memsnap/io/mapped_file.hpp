#pragma once
// A read-only view of a whole file. Regular files are memory-mapped so that a capture of
// several GB is never copied into memory; other inputs (pipes, "-" for stdin) are read.

#include <cstddef>
#include <string>
#include <string_view>

namespace memsnap::io {

class MappedFile {
public:
    // Opens `path` ("-" reads standard input). Throws memsnap::Error (input) naming the file.
    explicit MappedFile(std::string path);
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
    const std::string& path() const noexcept { return path_; }

private:
    std::string path_;
    const char* data_ = nullptr;
    std::size_t size_ = 0;
    bool mapped_ = false;
    std::string buffer_;  // used when the input cannot be mapped
};

}  // namespace memsnap::io
