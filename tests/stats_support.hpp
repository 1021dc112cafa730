#pragma once
// Helpers shared by the memory_summary / memory_stats tests.

#include <memsnap/stats/range.hpp>

#include <cstdint>
#include <ostream>

namespace memsnap {
// Readable ranges in doctest failure messages.
inline std::ostream& operator<<(std::ostream& os, const ByteRange& r) {
    return os << "[" << r.low << ", " << r.high << "]";
}
}  // namespace memsnap

namespace memsnap::test {

constexpr std::int64_t KiB = 1024, MiB = KiB * 1024, GiB = MiB * 1024;

// The range a truncated cell "n <unit>" stands for.
inline ByteRange cell(std::int64_t n, std::int64_t unit) { return {n * unit, (n + 1) * unit - 1}; }

}  // namespace memsnap::test
