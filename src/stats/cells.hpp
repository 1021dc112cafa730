#pragma once
// Reading single memory_summary cells. torch truncates every value to its unit (floor
// division), so a cell gives the range [n·unit, (n+1)·unit − 1]; "B" cells are exact.

#include <memsnap/stats/range.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::stats {

// "5114 MiB", "0 B", "146836 KB" (torch<=1.13 names, also binary), " 2 GiB " → range.
// Returns nullopt when the cell is not a size.
std::optional<ByteRange> parse_size_cell(std::string_view cell);

// "1234", "98765 K", "3 M" (K/M are 1000-based) → range. Returns nullopt when not a count.
std::optional<ByteRange> parse_count_cell(std::string_view cell);

// A value below 0 (a damaged or crafted file) counts as 0, as a snapshot's negative sizes do,
// and `negatives` counts it; negative_warning says so in the snapshot's words.
ByteRange clamp_negative(ByteRange value, std::size_t& negatives);
std::string negative_warning(std::size_t negatives);

}  // namespace memsnap::stats
