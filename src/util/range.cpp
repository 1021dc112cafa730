#include <memsnap/util/range.hpp>

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

// Not -floor_div(-a, b): -INT64_MIN overflows.
std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
    std::int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
    return q;
}
}  // namespace

ByteRange range_delta(ByteRange before, ByteRange after) {
    return {saturate(static_cast<Wide>(after.low) - before.high), saturate(static_cast<Wide>(after.high) - before.low)};
}

ByteRange range_divide(ByteRange value, std::int64_t divisor) {
    if (divisor <= 0) return value;
    return {floor_div(value.low, divisor), ceil_div(value.high, divisor)};
}

}  // namespace memsnap
