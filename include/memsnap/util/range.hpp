#pragma once
// An inclusive integer range [low, high]. memory_summary cells are truncated to their unit,
// so a cell never gives one number but a range of possible true values; exact sources
// (memory_stats, snapshots) use low == high. Arithmetic on ranges is interval arithmetic,
// so a result never claims more precision than its inputs.

#include <cstdint>

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
