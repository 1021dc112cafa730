#pragma once
// memory_stats keys and their values, which are ranges (util/range.hpp).

#include <memsnap/util/range.hpp>

#include <string_view>

namespace memsnap::stats {

// True for memory_stats keys that count bytes (`*_bytes.*`, `max_split_size`); false for
// counts (allocations, segments, OOMs, ...).
bool is_byte_metric(std::string_view key);

}  // namespace memsnap::stats
