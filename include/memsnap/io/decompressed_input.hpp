#pragma once
// A gzip or zstd file decompressed as it is read, never whole in memory: the output goes to
// one reservation of address space as large as the decompression limit, piece by piece when
// the reader asks for more, and the reader gives back what it has passed (release_prefix), as
// for a mapped file. The bytes keep their address, so views into them stay valid until
// released.

#include <memsnap/io/unwrap.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace memsnap::io {

struct DecompressOptions {
    // Past this many bytes the file is refused as a likely decompression bomb (unwrap_limit).
    std::uint64_t limit = std::uint64_t{64} << 20;
    // The least decompressed at each request for more: fewer, larger steps cost less; tests
    // set 1 to put a boundary after every byte.
    std::uint64_t step = std::uint64_t{4} << 20;
    // Told how many bytes of the compressed input are consumed, about every MiB.
    ConsumedFn consumed;
};

class DecompressedInput {
  public:
    // `compressed` must outlive this; `wrapping` is gzip or zstd. Throws Error (input) naming
    // `name`: a damaged start, or no address space for the limit.
    DecompressedInput(std::string_view compressed, Wrapping wrapping, std::string name,
                      const DecompressOptions& options);
    ~DecompressedInput();
    DecompressedInput(const DecompressedInput&) = delete;
    DecompressedInput& operator=(const DecompressedInput&) = delete;

    // What has been decompressed so far.
    std::string_view bytes() const noexcept { return {data_, size_}; }
    // Decompresses until there are at least `end` bytes, or the input ends, and returns all
    // bytes so far. Throws Error (input): damaged or cut-short data (with the compressed byte
    // offset), or more than the limit.
    std::string_view more(std::uint64_t end);
    std::string_view all() { return more(UINT64_MAX); }
    bool ended() const noexcept { return ended_; }
    // A guess at the whole size (from the gzip trailer or the zstd frame header, within the
    // limit), for reserving room.
    std::uint64_t expected_size() const noexcept { return expected_size_; }
    // The first `bytes` bytes will not be read again: their memory goes back to the system,
    // in steps of 2 MiB. Reading them afterwards gives zeros.
    void release_prefix(std::uint64_t bytes) noexcept;
    const std::string& name() const noexcept { return name_; }
    std::uint64_t step() const noexcept { return options_.step; }

    class Decoder;  // gzip or zstd

  private:
    static constexpr std::uint64_t kHugePage = std::uint64_t{2} << 20;
    std::string name_;
    std::unique_ptr<Decoder> decoder_;
    char* mapping_ = nullptr;  // data_ is in it, on a huge page's boundary
    std::uint64_t mapped_ = 0;
    DecompressOptions options_;
    char* data_ = nullptr;
    std::uint64_t size_ = 0;
    std::uint64_t reserved_ = 0;
    std::uint64_t released_ = 0;
    std::uint64_t expected_size_ = 0;
    std::uint64_t next_report_ = std::uint64_t{1} << 20;
    bool ended_ = false;
};

}  // namespace memsnap::io
