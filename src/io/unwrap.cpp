#include <memsnap/error.hpp>
#include <memsnap/io/unwrap.hpp>

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace memsnap::io {

namespace {

std::string too_big(std::uint64_t limit) {
    return fmt::format(
        "decompresses to more than {} bytes (64 times the file, at least 64 MiB, at most --max-input): "
        "refused as a likely decompression bomb; decompress it yourself if it is a real capture",
        limit);
}

// Calls `consumed` each time another MiB of the input has been consumed.
class Pace {
  public:
    explicit Pace(const ConsumedFn& consumed) : consumed_(consumed) {}
    void at(std::size_t offset) {
        if (!consumed_ || offset < next_) return;
        next_ = offset + (std::size_t{1} << 20);
        consumed_(offset);
    }

  private:
    const ConsumedFn& consumed_;
    std::size_t next_ = std::size_t{1} << 20;
};

std::string gunzip(std::string_view in, const std::string& name, std::uint64_t limit, const ConsumedFn& consumed) {
    Pace pace(consumed);
    std::string out;
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) throw input_error("cannot start gzip decompression", name);
    std::array<char, 1 << 16> chunk{};
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT32_MAX));
    while (true) {
        z.next_out = reinterpret_cast<Bytef*>(chunk.data());
        z.avail_out = chunk.size();
        const int rc = inflate(&z, Z_NO_FLUSH);
        out.append(chunk.data(), chunk.size() - z.avail_out);
        pace.at(in.size() - z.avail_in);
        if (out.size() > limit) {
            inflateEnd(&z);
            throw input_error(too_big(limit), name);
        }
        if (rc == Z_STREAM_END) {
            // Concatenated members (gzip -c a >> b) continue; padding after the last ends it.
            const std::size_t used = in.size() - z.avail_in;
            if (z.avail_in >= 2 && static_cast<unsigned char>(in[used]) == 0x1f &&
                static_cast<unsigned char>(in[used + 1]) == 0x8b) {
                inflateReset(&z);
                continue;
            }
            break;
        }
        if (rc != Z_OK) {
            const std::size_t at = in.size() - z.avail_in;
            inflateEnd(&z);
            throw input_error(fmt::format("gzip data is damaged or cut short ({})", z.msg ? z.msg : "no detail"), name,
                              at);
        }
        if (z.avail_in == 0 && z.avail_out != 0) {
            inflateEnd(&z);
            throw input_error("gzip data is cut short", name, in.size());
        }
    }
    inflateEnd(&z);
    return out;
}

std::uint32_t little_endian_32(std::string_view bytes) {
    std::uint32_t value = 0;
    for (std::size_t i = 4; i-- > 0;) value = value << 8 | static_cast<unsigned char>(bytes[i]);
    return value;
}

bool skippable_magic(std::uint32_t magic) { return (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START; }

// pzstd and seekable-zstd start with skippable frames (magic, a 4-byte little-endian size,
// that many bytes), which the decoder passes over; a compressed frame must follow them.
void check_skippable_start(std::string_view in, const std::string& name) {
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
    if (at == 0) return;
    if (at == in.size()) throw input_error("zstd skippable frames only: no compressed frame follows them", name, at);
    if (in.size() - at < 4 || little_endian_32(in.substr(at)) != ZSTD_MAGICNUMBER)
        throw input_error("no zstd frame after the skippable frames", name, at);
}

std::string unzstd(std::string_view in, const std::string& name, std::uint64_t limit, const ConsumedFn& consumed) {
    check_skippable_start(in, name);
    Pace pace(consumed);
    std::string out;
    ZSTD_DStream* stream = ZSTD_createDStream();
    if (!stream) throw input_error("cannot start zstd decompression", name);
    std::array<char, 1 << 16> chunk{};
    ZSTD_inBuffer input{in.data(), in.size(), 0};
    std::size_t last = 1;
    while (input.pos < input.size || last != 0) {
        ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
        last = ZSTD_decompressStream(stream, &output, &input);
        if (ZSTD_isError(last)) {
            const std::size_t at = input.pos;
            const std::string why = ZSTD_getErrorName(last);
            ZSTD_freeDStream(stream);
            throw input_error(fmt::format("zstd data is damaged ({})", why), name, at);
        }
        out.append(chunk.data(), output.pos);
        pace.at(input.pos);
        if (out.size() > limit) {
            ZSTD_freeDStream(stream);
            throw input_error(too_big(limit), name);
        }
        if (input.pos == input.size && output.pos == 0 && last != 0) {
            ZSTD_freeDStream(stream);
            throw input_error("zstd data is cut short", name, in.size());
        }
    }
    ZSTD_freeDStream(stream);
    return out;
}

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

// The pickle inside a _memory_viz.py page: [{"name": "snapshot.pickle", "base64": "..."}].
std::string from_html(std::string_view page, const std::string& name) {
    const std::string_view key = "\"base64\"";
    const auto at = page.find(key);
    if (at == std::string_view::npos)
        throw input_error(
            "an HTML page without a snapshot inside (memsnap reads the pages of _memory_viz.py, "
            "which hold one as base64)",
            name);
    std::size_t pos = at + key.size();
    while (pos < page.size() && (page[pos] == ' ' || page[pos] == ':')) ++pos;
    if (pos >= page.size() || page[pos] != '"') throw input_error("the page's base64 field is not a string", name, pos);
    ++pos;
    std::string out;
    out.reserve((page.size() - pos) / 4 * 3);
    std::uint32_t bits = 0;
    int held = 0;
    for (; pos < page.size() && page[pos] != '"'; ++pos) {
        const char c = page[pos];
        if (c == '=' || c == '\\' || std::isspace(static_cast<unsigned char>(c)))
            continue;  // padding, escaped newlines
        const int v = base64_value(c);
        if (v < 0)
            throw input_error(fmt::format("the page's base64 holds a byte 0x{:02x} that is not base64",
                                          static_cast<unsigned char>(c)),
                              name, pos);
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        held += 6;
        if (held >= 8) {
            held -= 8;
            out += static_cast<char>((bits >> held) & 0xff);
        }
    }
    if (pos >= page.size()) throw input_error("the page's base64 string is cut short", name, page.size());
    return out;
}

bool starts_with_icase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
    return true;
}

}  // namespace

Wrapping wrapping_of(std::string_view head) {
    if (head.size() >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b)
        return Wrapping::gzip;
    if (head.size() >= 4 && (little_endian_32(head) == ZSTD_MAGICNUMBER || skippable_magic(little_endian_32(head))))
        return Wrapping::zstd;
    std::size_t skip = 0;
    if (head.substr(0, 3) == "\xef\xbb\xbf") skip = 3;  // a byte-order mark
    while (skip < head.size() && std::isspace(static_cast<unsigned char>(head[skip]))) ++skip;
    const auto rest = head.substr(skip);
    if (starts_with_icase(rest, "<!doctype html") || starts_with_icase(rest, "<html")) return Wrapping::html;
    return Wrapping::none;
}

std::string_view to_string(Wrapping wrapping) {
    switch (wrapping) {
        case Wrapping::gzip:
            return "gzip";
        case Wrapping::zstd:
            return "zstd";
        case Wrapping::html:
            return "HTML page";
        case Wrapping::none:
            break;
    }
    return "plain";
}

std::vector<std::string> page_snapshot_names(std::string_view page) {
    // json.dumps writes each entry as {"name": "...", "base64": "..."}: the last "name" before a
    // "base64" is its entry's.
    constexpr std::string_view key = "\"base64\"", name_key = "\"name\"";
    std::vector<std::string> names;
    std::size_t from = 0;
    for (auto at = page.find(key); at != std::string_view::npos; at = page.find(key, from)) {
        std::string name;
        const auto window = page.substr(from, at - from);
        if (const auto n = window.rfind(name_key); n != std::string_view::npos) {
            std::size_t pos = n + name_key.size();
            while (pos < window.size() && (window[pos] == ' ' || window[pos] == ':')) ++pos;
            if (pos < window.size() && window[pos] == '"') {
                const auto end = window.find('"', pos + 1);
                if (end != std::string_view::npos)
                    name = std::string(window.substr(pos + 1, std::min<std::size_t>(end - pos - 1, 200)));
            }
        }
        names.push_back(std::move(name));
        const auto open = page.find('"', at + key.size());  // past the base64 string
        const auto close = open == std::string_view::npos ? open : page.find('"', open + 1);
        if (close == std::string_view::npos) break;
        from = close + 1;
    }
    return names;
}

std::uint64_t unwrap_limit(std::uint64_t size, std::uint64_t max_input) {
    const std::uint64_t grown = size > (UINT64_MAX >> 7) ? UINT64_MAX : size * 64;
    return std::min(max_input, std::max<std::uint64_t>(std::uint64_t{64} << 20, grown));
}

std::optional<std::string> unwrap(std::string_view bytes, const std::string& name, std::uint64_t max_output,
                                  const ConsumedFn& consumed) {
    switch (wrapping_of(bytes.substr(0, 4096))) {
        case Wrapping::gzip:
            return gunzip(bytes, name, max_output, consumed);
        case Wrapping::zstd:
            return unzstd(bytes, name, max_output, consumed);
        case Wrapping::html:
            return from_html(bytes, name);
        case Wrapping::none:
            break;
    }
    return std::nullopt;
}

}  // namespace memsnap::io
