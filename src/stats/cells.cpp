#include "cells.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string>

namespace memsnap::stats {

namespace {

// 128-bit intermediate so products and differences cannot overflow.
__extension__ using Wide = __int128;

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Splits "  5114 MiB " into the integer and the trimmed rest.
bool split_number(std::string_view cell, std::int64_t& number, std::string_view& rest) {
    cell = trim(cell);
    const char* begin = cell.data();
    const char* end = cell.data() + cell.size();
    auto [ptr, ec] = std::from_chars(begin, end, number);
    if (ec != std::errc() || ptr == begin) return false;
    rest = trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)));
    return true;
}

std::optional<ByteRange> scaled(std::int64_t n, std::int64_t unit) {
    const Wide low = static_cast<Wide>(n) * unit;
    const Wide high = low + unit - 1;
    if (low < std::numeric_limits<std::int64_t>::min() || high > std::numeric_limits<std::int64_t>::max())
        return std::nullopt;
    return ByteRange{static_cast<std::int64_t>(low), static_cast<std::int64_t>(high)};
}

}  // namespace

std::optional<ByteRange> parse_size_cell(std::string_view cell) {
    std::int64_t n = 0;
    std::string_view unit;
    if (!split_number(cell, n, unit)) return std::nullopt;
    // torch>=2.0 writes KiB..PiB; older releases wrote KB..PB with the same 1024 steps.
    static constexpr std::array<std::array<std::string_view, 2>, 6> names = {
        {{"B", "B"}, {"KiB", "KB"}, {"MiB", "MB"}, {"GiB", "GB"}, {"TiB", "TB"}, {"PiB", "PB"}}};
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (unit == names[i][0] || unit == names[i][1]) return scaled(n, std::int64_t{1} << (10 * i));
    }
    return std::nullopt;
}

std::optional<ByteRange> parse_count_cell(std::string_view cell) {
    std::int64_t n = 0;
    std::string_view suffix;
    if (!split_number(cell, n, suffix)) return std::nullopt;
    if (suffix.empty()) return ByteRange::exact(n);
    if (suffix == "K") return scaled(n, 1'000);
    if (suffix == "M") return scaled(n, 1'000'000);
    return std::nullopt;
}

ByteRange clamp_negative(ByteRange value, std::size_t& negatives) {
    if (value.low >= 0) return value;
    ++negatives;
    return {0, std::max<std::int64_t>(value.high, 0)};
}

std::string negative_warning(std::size_t negatives) {
    return fmt::format("{} negative size(s) were counted as 0 bytes", negatives);
}

}  // namespace memsnap::stats
