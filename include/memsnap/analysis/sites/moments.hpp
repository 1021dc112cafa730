#pragma once
// What was live at one moment of a trace, by site and category: the peak, an OOM.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace memsnap::analysis {

// Memory held at one moment by one site (or one category, in `categories`).
struct LiveSite {
    std::size_t rank = 0;
    SiteKey site;
    Category category = Category::unknown;
    std::int64_t bytes = 0;
    std::int64_t allocations = 0;
    bool has_stack = true;  // false: allocations without a stack, grouped by size
};

struct MomentUsage {
    std::vector<LiveSite> sites;  // by bytes, at most options.top (0: all)
    std::array<std::int64_t, category_count> category_bytes{};
    // The sites past those listed, added up.
    std::int64_t sites_not_listed = 0, bytes_not_listed = 0, allocations_not_listed = 0;
};

// The most allocated memory of a trace and what held it: held before the device's event
// `event` (a position in its trace; its number of events: the end), since the event before
// it, at `time_us` (the first event's time when the trace begins at its peak).
struct Peak {
    std::int64_t bytes = 0;
    std::int64_t time_us = -1;
    std::size_t event = 0;
    int device = 0;
    MomentUsage usage;
    // Allocations the usage counts that the trace leaves live and the snapshot does not hold: the
    // trace lacks their frees, so they may have been freed before the peak. Bytes as allocated.
    std::int64_t not_in_snapshot = 0, not_in_snapshot_bytes = 0;
};

}  // namespace memsnap::analysis
