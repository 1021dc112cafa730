#include "zstd_magic.hpp"

#include <memsnap/error.hpp>
#include <memsnap/io/decompressed_input.hpp>
#include <memsnap/io/unwrap.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace memsnap::io {

using detail::little_endian_32;
using detail::skippable_magic;

namespace {

// Whole, for what is read at once (a page, a table, JSON): the caller holds it all anyway.
std::string decompress_whole(std::string_view in, Wrapping wrapping, const std::string& name, std::uint64_t limit,
                             const ConsumedFn& consumed) {
    DecompressOptions options;
    options.limit = limit;
    options.step = std::uint64_t{64} << 20;
    options.consumed = consumed;
    DecompressedInput input(in, wrapping, name, options);
    return std::string(input.all());
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
    const auto wrapping = wrapping_of(bytes.substr(0, 4096));
    switch (wrapping) {
        case Wrapping::gzip:
        case Wrapping::zstd:
            return decompress_whole(bytes, wrapping, name, max_output, consumed);
        case Wrapping::html:
            return from_html(bytes, name);
        case Wrapping::none:
            break;
    }
    return std::nullopt;
}

}  // namespace memsnap::io
