#include <memsnap/stats/range.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <limits>

namespace memsnap {

namespace {

// 128-bit intermediate so products and differences cannot overflow.
__extension__ using Wide = __int128;
std::int64_t saturate(Wide v) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    constexpr auto min = std::numeric_limits<std::int64_t>::min();
    if (v > max) return max;
    if (v < min) return min;
    return static_cast<std::int64_t>(v);
}

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}
}  // namespace

ByteRange range_delta(ByteRange before, ByteRange after) {
    return {saturate(static_cast<Wide>(after.low) - before.high),
            saturate(static_cast<Wide>(after.high) - before.low)};
}

ByteRange range_divide(ByteRange value, std::int64_t divisor) {
    if (divisor <= 0) return value;
    return {floor_div(value.low, divisor), -floor_div(-value.high, divisor)};
}

}  // namespace memsnap

namespace memsnap::stats {

bool is_byte_metric(std::string_view key) {
    return key.find("_bytes") != std::string_view::npos || key == "max_split_size";
}

namespace {

std::string format_count(std::int64_t count) { return fmt::format("{}", count); }

// When the range is exactly one unit wide and aligned, it came from one truncated table
// cell: show it the way the table did.
std::string as_table_cell(ByteRange r, bool bytes) {
    if (bytes) {
        static constexpr std::array<const char*, 5> units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        for (std::size_t i = units.size(); i-- > 0;) {
            const std::int64_t unit = std::int64_t{1} << (10 * (i + 1));
            if (r.low % unit == 0 && r.high - r.low == unit - 1)
                return fmt::format("{} {}", r.low / unit, units[i]);
        }
    } else {
        static constexpr std::array<std::pair<std::int64_t, const char*>, 2> units = {
            std::pair<std::int64_t, const char*>{1'000'000, "M"}, {1'000, "K"}};
        for (const auto& [unit, name] : units)
            if (r.low % unit == 0 && r.high - r.low == unit - 1)
                return fmt::format("{} {}", r.low / unit, name);
    }
    return {};
}

}  // namespace

std::string format_range(ByteRange r, bool bytes) {
    const char* suffix = bytes ? " B" : "";
    if (r.is_exact()) {
        if (!bytes) return format_count(r.low);
        if (std::abs(r.low) < 1024) return util::human_bytes(r.low);
        return fmt::format("{} ({} B)", util::human_bytes(r.low), r.low);
    }
    if (auto cell = as_table_cell(r, bytes); !cell.empty())
        return fmt::format("{} ({}–{}{})", cell, r.low, r.high, suffix);
    if (bytes)
        return fmt::format("{}–{} ({}–{} B)", util::human_bytes(r.low), util::human_bytes(r.high), r.low,
                           r.high);
    return fmt::format("{}–{}", r.low, r.high);
}

std::string format_range_compact(ByteRange r, bool bytes) {
    if (r.is_exact()) return bytes ? util::human_bytes(r.low) : format_count(r.low);
    if (auto cell = as_table_cell(r, bytes); !cell.empty()) return cell;
    if (bytes) return fmt::format("{}–{}", util::human_bytes(r.low), util::human_bytes(r.high));
    return fmt::format("{}–{}", r.low, r.high);
}

std::string format_delta(ByteRange d, bool bytes) {
    auto one = [bytes](std::int64_t v) {
        if (bytes) return util::signed_bytes(v);
        return v > 0 ? fmt::format("+{}", v) : fmt::format("{}", v);
    };
    if (d.is_exact()) return one(d.low);
    // Both ends round to the same text (e.g. a 1 MiB-wide range on a GiB change): say "about".
    if (const auto low = one(d.low), high = one(d.high); low == high) return "≈" + low;
    return fmt::format("{} … {}", one(d.low), one(d.high));
}

}  // namespace memsnap::stats
