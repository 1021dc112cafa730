#pragma once
// What one snapshot holds: totals, states, fragmentation, categories, trace activity and the
// top allocation sites. `info` adds its OOMs explained (info.hpp); trend and ranks reduce each
// capture to this.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/snapshot/model.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

struct DeviceTotals {
    int device = 0;
    MemoryTotals totals;
};

struct SiteUsage {
    SiteKey site;
    Category category = Category::unknown;  // of most of its bytes
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
    bool has_stack = true;  // false: blocks without a stack, grouped by size
};

struct CategoryUsage {
    std::int64_t bytes = 0;
    std::int64_t blocks = 0;
};

// Segments of one stream and memory pool (the default pool, or a private pool of a CUDA
// graph or a MemPool): a request is served from free blocks of its own stream and pool only.
struct PoolUsage {
    int device = 0;
    std::int64_t stream = 0;
    std::int64_t pool_id[2] = {0, 0};  // {0, 0}: the default pool
    std::int64_t segments = 0, expandable_segments = 0;
    std::int64_t reserved_bytes = 0, allocated_bytes = 0, free_bytes = 0;
    std::int64_t pending_free_bytes = 0;  // freed by the program, held until its stream's work ends
    std::int64_t largest_free_block_bytes = 0;
    bool is_private() const { return pool_id[0] != 0 || pool_id[1] != 0; }
};

struct SnapshotContents {
    std::string file;
    std::string encoding, writer, generation;
    int protocol = 0;
    std::vector<std::string> features;
    std::optional<int> device;  // --device: everything below is of this device
    MemoryTotals totals;
    std::vector<DeviceTotals> devices;                    // sorted by device
    std::map<std::string, std::int64_t> blocks_by_state;  // state names as written
    std::int64_t blocks_with_frames = 0;
    std::int64_t large_segments = 0, small_segments = 0, expandable_segments = 0, private_pool_segments = 0;
    std::size_t trace_devices = 0;
    std::map<std::string, std::int64_t> trace_events_by_action;
    std::int64_t trace_events_with_stack = 0;
    std::optional<std::int64_t> trace_first_us, trace_last_us;
    std::optional<std::string> main_script;  // the file the process ran as __main__, by its stacks
    // A sample of the trace's events, the same events in every capture that holds them: hashes
    // of (time, address, size, action, device) that fall in one 64th of the hash range (every
    // event when there are few), sorted. Two captures of one process share some; see
    // share_trace_events.
    std::vector<std::uint64_t> trace_sample;
    bool trace_sample_all = false;  // the sample holds every event
    std::int64_t oom_events = 0;
    std::vector<std::pair<std::string, std::string>> allocator_settings;
    bool has_allocator_settings = false;
    std::int64_t annotations = 0;
    std::vector<std::string> top_level_keys;
    std::array<CategoryUsage, category_count> categories{};  // live blocks, by Category
    std::vector<std::string> warnings;                       // what does not add up in the file (Snapshot::warnings)
    std::vector<SiteUsage> top_sites;                        // by live bytes, at most options.top (0: all)
    std::int64_t site_count = 0;
    std::int64_t largest_free_block_bytes = 0;  // the largest inactive block of any pool
    std::vector<PoolUsage> pools;               // by device, stream, pool
};

// Events two captures' trace samples share, and those the later one's sample holds within the
// earlier one's time window while sharing none (traces of two processes recorded at once).
struct SampleOverlap {
    std::int64_t shared = 0;  // sampled events in both (every shared event when both samples are whole)
    bool sampled = false;     // `shared` counts a sample (one in 64), not every shared event
    std::int64_t apart = 0;   // sampled events of the second within the first's window, when none is shared
};
SampleOverlap share_trace_events(const SnapshotContents& before, const SnapshotContents& after);

// Throws Error: usage for invalid site rules, input when options.device is not in the capture.
SnapshotContents describe_snapshot(const snapshot::Snapshot& snap, const AnalysisOptions& options);

}  // namespace memsnap::analysis
