#include "zstd_magic.hpp"

#include <memsnap/error.hpp>
#include <memsnap/io/decompressed_input.hpp>

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

namespace memsnap::io {

using detail::little_endian_32;
using detail::skippable_magic;

class DecompressedInput::Decoder {
  public:
    virtual ~Decoder() = default;
    // Writes up to `room` (> 0) bytes to `out` and says how many; sets `ended` once the
    // input is done. Throws Error (input) for damaged or cut-short data.
    virtual std::size_t decode(char* out, std::size_t room, bool& ended) = 0;
    // Bytes of the compressed input consumed so far.
    virtual std::uint64_t consumed() const = 0;
};

namespace {

std::string too_big(std::uint64_t limit) {
    return fmt::format(
        "decompresses to more than {} bytes (64 times the file, at least 64 MiB, at most --max-input): "
        "refused as a likely decompression bomb; decompress it yourself if it is a real capture",
        limit);
}

class Gunzip final : public DecompressedInput::Decoder {
  public:
    Gunzip(std::string_view in, const std::string& name) : in_(in), name_(name) {
        if (inflateInit2(&z_, 15 + 32) != Z_OK) throw input_error("cannot start gzip decompression", name);
        feed();
    }
    ~Gunzip() override { inflateEnd(&z_); }
    Gunzip(const Gunzip&) = delete;
    Gunzip& operator=(const Gunzip&) = delete;

    std::uint64_t consumed() const override { return fed_ - z_.avail_in; }

    std::size_t decode(char* out, std::size_t room, bool& ended) override {
        if (z_.avail_in == 0) feed();
        z_.next_out = reinterpret_cast<Bytef*>(out);
        z_.avail_out = static_cast<uInt>(room);
        const int rc = inflate(&z_, Z_NO_FLUSH);
        const std::size_t produced = room - z_.avail_out;
        if (rc == Z_STREAM_END) {
            // Concatenated members (gzip -c a >> b) continue; padding after the last ends it.
            const std::uint64_t used = consumed();
            if (in_.size() - used >= 2 && static_cast<unsigned char>(in_[used]) == 0x1f &&
                static_cast<unsigned char>(in_[used + 1]) == 0x8b)
                inflateReset(&z_);
            else
                ended = true;
            return produced;
        }
        if (rc != Z_OK)
            throw input_error(fmt::format("gzip data is damaged or cut short ({})", z_.msg ? z_.msg : "no detail"),
                              name_, consumed());
        if (z_.avail_in == 0 && fed_ == in_.size() && z_.avail_out != 0)
            throw input_error("gzip data is cut short", name_, in_.size());
        return produced;
    }

  private:
    // zlib counts in 32 bits: the input goes in in pieces of 1 GiB.
    void feed() {
        const auto piece = std::min<std::uint64_t>(in_.size() - fed_, std::uint64_t{1} << 30);
        z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data() + fed_));
        z_.avail_in = static_cast<uInt>(piece);
        fed_ += piece;
    }

    std::string_view in_;
    const std::string& name_;
    z_stream z_{};
    std::uint64_t fed_ = 0;
};

// pzstd and seekable-zstd start with skippable frames (magic, a 4-byte little-endian size,
// that many bytes), which the decoder passes over; a compressed frame must follow them.
// Returns where it starts.
std::size_t check_skippable_start(std::string_view in, const std::string& name) {
    constexpr std::size_t header = 8;  // ZSTD_SKIPPABLEHEADERSIZE, not in the stable API
    std::size_t at = 0;
    while (in.size() - at >= 4 && skippable_magic(little_endian_32(in.substr(at)))) {
        if (in.size() - at < header) throw input_error("a zstd skippable frame's header is cut short", name, at);
        const std::uint32_t size = little_endian_32(in.substr(at + 4));
        if (size > in.size() - at - header)
            throw input_error(
                fmt::format("a zstd skippable frame of {} bytes runs past the end of the file ({} bytes left)", size,
                            in.size() - at - header),
                name, at);
        at += header + size;
    }
    if (at == 0) return 0;
    if (at == in.size()) throw input_error("zstd skippable frames only: no compressed frame follows them", name, at);
    if (in.size() - at < 4 || little_endian_32(in.substr(at)) != ZSTD_MAGICNUMBER)
        throw input_error("no zstd frame after the skippable frames", name, at);
    return at;
}

class Unzstd final : public DecompressedInput::Decoder {
  public:
    Unzstd(std::string_view in, const std::string& name)
        : in_(in), name_(name), first_frame_(check_skippable_start(in, name)), stream_(ZSTD_createDStream()) {
        if (!stream_) throw input_error("cannot start zstd decompression", name);
        input_ = {in.data(), in.size(), 0};
    }
    ~Unzstd() override { ZSTD_freeDStream(stream_); }
    Unzstd(const Unzstd&) = delete;
    Unzstd& operator=(const Unzstd&) = delete;

    std::uint64_t consumed() const override { return input_.pos; }
    std::size_t first_frame() const { return first_frame_; }

    std::size_t decode(char* out, std::size_t room, bool& ended) override {
        ZSTD_outBuffer output{out, room, 0};
        last_ = ZSTD_decompressStream(stream_, &output, &input_);
        if (ZSTD_isError(last_))
            throw input_error(fmt::format("zstd data is damaged ({})", ZSTD_getErrorName(last_)), name_, input_.pos);
        const bool all_in = input_.pos == input_.size;
        if (all_in && output.pos == 0 && last_ != 0) throw input_error("zstd data is cut short", name_, in_.size());
        ended = all_in && last_ == 0;
        return output.pos;
    }

  private:
    std::string_view in_;
    const std::string& name_;
    std::size_t first_frame_;
    ZSTD_DStream* stream_;
    ZSTD_inBuffer input_{};
    std::size_t last_ = 1;
};

// What the file says it holds: gzip's trailer (the size modulo 2^32) or zstd's first frame
// header, when it says. Only a guess: nothing checks it until the end.
std::uint64_t stated_size(std::string_view in, Wrapping wrapping, std::size_t zstd_frame) {
    if (wrapping == Wrapping::gzip) return in.size() >= 18 ? little_endian_32(in.substr(in.size() - 4)) : 0;
    const auto size = ZSTD_getFrameContentSize(in.data() + zstd_frame, in.size() - zstd_frame);
    return size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR ? 0 : size;
}

}  // namespace

DecompressedInput::DecompressedInput(std::string_view compressed, Wrapping wrapping, std::string name,
                                     const DecompressOptions& options)
    : name_(std::move(name)), options_(options) {
    std::size_t zstd_frame = 0;
    if (wrapping == Wrapping::gzip) {
        decoder_ = std::make_unique<Gunzip>(compressed, name_);
    } else if (wrapping == Wrapping::zstd) {
        auto zstd = std::make_unique<Unzstd>(compressed, name_);
        zstd_frame = zstd->first_frame();
        decoder_ = std::move(zstd);
    } else {
        throw input_error(fmt::format("a {} file is not compressed", to_string(wrapping)), name_);
    }
    // Room for one byte past the limit, which is how a bomb shows. Address space only: pages
    // cost memory once written, and are given back behind the reader. Huge pages, where the
    // system has them: a fault per 4 KiB page of fresh memory would cost more than inflating it.
    reserved_ = (options_.limit + 1 + kHugePage - 1) / kHugePage * kHugePage;
    mapped_ = reserved_ + kHugePage;  // room to start on a huge page's boundary
    void* at = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (at == MAP_FAILED)
        throw input_error(fmt::format("cannot reserve {} bytes of address space to decompress into ({}); a smaller "
                                      "--max-input asks for less",
                                      mapped_, std::strerror(errno)),
                          name_);
    mapping_ = static_cast<char*>(at);
    const auto address = reinterpret_cast<std::uintptr_t>(at);
    data_ = mapping_ + ((kHugePage - address % kHugePage) % kHugePage);
    ::madvise(data_, reserved_, MADV_HUGEPAGE);
    const std::uint64_t guess = std::max(stated_size(compressed, wrapping, zstd_frame), compressed.size() * 4);
    expected_size_ = std::min(guess, options_.limit);
}

DecompressedInput::~DecompressedInput() {
    if (mapping_) ::munmap(mapping_, mapped_);
}

std::string_view DecompressedInput::more(std::uint64_t end) {
    if (ended_ || end <= size_) return bytes();
    // Pieces of 1 MiB at most, so that progress is told as often as the reader tells its own.
    constexpr std::uint64_t piece = std::uint64_t{1} << 20;
    const std::uint64_t target = std::max(end, size_ + options_.step);
    while (size_ < target && !ended_) {
        const std::uint64_t room = std::min({target - size_, reserved_ - size_, piece});
        size_ += decoder_->decode(data_ + size_, static_cast<std::size_t>(room), ended_);
        if (options_.consumed && decoder_->consumed() >= next_report_) {
            next_report_ = decoder_->consumed() + piece;
            options_.consumed(decoder_->consumed());
        }
        if (size_ > options_.limit) throw input_error(too_big(options_.limit), name_);
    }
    return bytes();
}

void DecompressedInput::release_prefix(std::uint64_t bytes) noexcept {
    // Whole huge pages only: part of one would be split into small pages.
    const std::uint64_t length = std::min(bytes, size_) / kHugePage * kHugePage;
    if (length <= released_) return;
    ::madvise(data_ + released_, length - released_, MADV_DONTNEED);
    released_ = length;
}

}  // namespace memsnap::io
