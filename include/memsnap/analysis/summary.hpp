#pragma once
// What `memsnap info` reports about one snapshot: totals, states, fragmentation, trace
// activity and the top allocation sites. Pure data; the report layer renders it.

#include <memsnap/analysis/sites.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

struct MemoryTotals {
    std::int64_t segments = 0;
    std::int64_t blocks = 0;
    std::int64_t reserved_bytes = 0;   // sum of segment total_size
    std::int64_t allocated_bytes = 0;  // active_allocated blocks
    std::int64_t active_bytes = 0;     // allocated + pending free
    std::int64_t inactive_bytes = 0;   // cached free blocks
    std::int64_t requested_bytes = 0;  // requested_size of active blocks
    std::int64_t internal_waste_bytes = 0;  // size - requested of active_allocated blocks
    // Inactive blocks in segments that also hold active blocks: cannot be released.
    std::int64_t external_fragmentation_bytes = 0;
    // Segments that are one whole inactive block: empty_cache() can return them.
    std::int64_t releasable_bytes = 0;
};

struct DeviceTotals {
    int device = 0;
    MemoryTotals totals;
};

struct SiteUsage {
    SiteKey site;
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
};

struct SnapshotSummary {
    std::string file;
    std::string encoding, writer, generation;
    int protocol = 0;
    std::vector<std::string> features;
    MemoryTotals totals;
    std::vector<DeviceTotals> devices;  // sorted by device
    std::map<std::string, std::int64_t> blocks_by_state;  // state names as written
    std::int64_t blocks_with_frames = 0;
    std::int64_t large_segments = 0, small_segments = 0, expandable_segments = 0,
                 private_pool_segments = 0;
    std::size_t trace_devices = 0;
    std::map<std::string, std::int64_t> trace_events_by_action;
    std::optional<std::int64_t> trace_first_us, trace_last_us;
    std::int64_t oom_events = 0;
    std::vector<std::pair<std::string, std::string>> allocator_settings;
    bool has_allocator_settings = false;
    std::int64_t annotations = 0;
    std::vector<std::string> top_level_keys;
    std::vector<SiteUsage> top_sites;  // by live bytes, at most `top`
    std::int64_t site_count = 0;
};

// Throws memsnap::Error (usage) for invalid site rules.
SnapshotSummary summarize(const snapshot::Snapshot& snap, const SiteRules& rules,
                          std::size_t top = 10);  // top 0 lists every site

// Totals over every segment, or over the segments of `device` when it is >= 0.
MemoryTotals compute_totals(const snapshot::Snapshot& snap, int device = -1);

}  // namespace memsnap::analysis
