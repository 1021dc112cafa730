#pragma once
// Reading single memory_summary cells. torch truncates every value to its unit (floor
// division), so a cell gives the range [n·unit, (n+1)·unit − 1]; "B" cells are exact.

#include <memsnap/stats/range.hpp>

#include <optional>
#include <string_view>

namespace memsnap::stats {

// "5114 MiB", "0 B", "146836 KB" (torch<=1.13 names, also binary), " 2 GiB " → range.
// Returns nullopt when the cell is not a size.
std::optional<ByteRange> parse_size_cell(std::string_view cell);

// "1234", "98765 K", "3 M" (K/M are 1000-based) → range. Returns nullopt when not a count.
std::optional<ByteRange> parse_count_cell(std::string_view cell);

}  // namespace memsnap::stats
