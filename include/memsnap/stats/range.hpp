#pragma once
// An inclusive integer range [low, high]. memory_summary cells are truncated to their unit,
// so a cell never gives one number but a range of possible true values; exact sources
// (memory_stats, snapshots) use low == high. Arithmetic on ranges is interval arithmetic,
// so a result never claims more precision than its inputs.

#include <cstdint>
#include <string>
#include <string_view>

namespace memsnap {

struct ByteRange {
    std::int64_t low = 0;
    std::int64_t high = 0;

    static constexpr ByteRange exact(std::int64_t value) { return {value, value}; }
    constexpr bool is_exact() const { return low == high; }
    constexpr bool contains(std::int64_t value) const { return low <= value && value <= high; }
    friend constexpr bool operator==(const ByteRange&, const ByteRange&) = default;
};

// after − before: [after.low − before.high, after.high − before.low] (saturating).
ByteRange range_delta(ByteRange before, ByteRange after);

// The range divided by a positive divisor, rounded outward (floor low, ceil high) so the
// true quotient stays inside.
ByteRange range_divide(ByteRange value, std::int64_t divisor);

}  // namespace memsnap

namespace memsnap::stats {

// True for memory_stats keys that count bytes (`*_bytes.*`, `max_split_size`); false for
// counts (allocations, segments, OOMs, ...).
bool is_byte_metric(std::string_view key);

// A value range for people: "5114 MiB (5362417664–5363466239 B)" when the range is exactly one
// table unit wide, "512 B" when exact, otherwise "lo–hi (lo–hi B)". Counts use K/M (1000).
std::string format_range(ByteRange range, bool bytes);
// As format_range without the byte figures: "5114 MiB", "512 B", "1.00 KiB–2.00 KiB".
std::string format_range_compact(ByteRange range, bool bytes);
// A signed change range: "+8 B" when exact, "+7.00 MiB … +9.00 MiB" otherwise, "≈+2.00 GiB"
// when both ends print the same at two decimals.
std::string format_delta(ByteRange delta, bool bytes);

}  // namespace memsnap::stats
