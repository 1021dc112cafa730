#pragma once
// Memory totals of one snapshot, computed from its segments and blocks.

#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <set>

namespace memsnap::analysis {

struct MemoryTotals {
    std::int64_t segments = 0;
    std::int64_t blocks = 0;
    std::int64_t live_blocks = 0;           // active_allocated
    std::int64_t reserved_bytes = 0;        // sum of segment total_size
    std::int64_t allocated_bytes = 0;       // active_allocated blocks
    std::int64_t active_bytes = 0;          // allocated + pending free
    std::int64_t inactive_bytes = 0;        // cached free blocks
    std::int64_t requested_bytes = 0;       // requested_size of active_allocated blocks, as torch's stat
    std::int64_t pending_free_bytes = 0;    // active_pending_free blocks: freed, in use on another stream
    std::int64_t internal_waste_bytes = 0;  // size - requested of active_allocated blocks
    // Free blocks inside segments that also hold active blocks: torch's inactive_split_bytes
    // ("Non-releasable memory"). The allocator cannot return these to the driver, and a
    // request larger than any one of them cannot use them: external fragmentation.
    std::int64_t inactive_split_bytes = 0;
    // What torch.cuda.empty_cache() can return: segments that are one whole free block, and
    // the whole pages inside free blocks of expandable segments (2 MiB in the small pool,
    // 20 MiB in the large), which it unmaps.
    std::int64_t releasable_bytes = 0;
    // The rest of the cache: free memory empty_cache cannot return (inactive − releasable).
    std::int64_t non_releasable_bytes = 0;
};

// Totals over every segment, or over those of `device`.
MemoryTotals compute_totals(const snapshot::Snapshot& snap, std::optional<int> device = std::nullopt);

// Totals per device, in one pass.
std::map<int, MemoryTotals> totals_by_device(const snapshot::Snapshot& snap);

// The devices that hold segments.
std::set<int> devices_of(const snapshot::Snapshot& snap);

// Throws Error (input) naming the file and the devices it holds when `device` is given and
// the capture holds no segment of it.
void require_device(const snapshot::Snapshot& snap, std::optional<int> device);

}  // namespace memsnap::analysis
