#pragma once
// torch's memory_stats() vocabulary, written once: the stat arrays with their pools and
// metrics ("allocated_bytes.all.current"), the oversize counters and the scalars, and the
// keys memsnap reads by name. The summary reader, the stats-dict reader, the compact
// StatMap and the analyses all use these.

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats::keys {

inline constexpr std::array<std::string_view, 9> stat_arrays = {
    "allocation",      "segment",        "active",       "inactive_split",
    "allocated_bytes", "reserved_bytes", "active_bytes", "inactive_split_bytes",
    "requested_bytes"};
inline constexpr std::array<std::string_view, 3> pools = {"all", "large_pool", "small_pool"};
inline constexpr std::array<std::string_view, 4> metrics = {"current", "peak", "allocated", "freed"};
inline constexpr std::array<std::string_view, 2> oversize = {"oversize_allocations", "oversize_segments"};
inline constexpr std::array<std::string_view, 7> scalars = {
    "num_ooms",         "num_alloc_retries", "max_split_size",    "num_sync_all_streams",
    "num_device_alloc", "num_device_free",   "num_oom_rejections"};

// Every key above (arrays x pools x metrics, oversize x metrics, scalars), sorted.
const std::vector<std::string>& vocabulary();

// The keys memsnap reads by name (char arrays: they serve as `const char*` and string_view).
inline constexpr char allocated_current[] = "allocated_bytes.all.current";
inline constexpr char allocated_peak[] = "allocated_bytes.all.peak";
inline constexpr char allocated_total[] = "allocated_bytes.all.allocated";  // cumulative
inline constexpr char reserved_current[] = "reserved_bytes.all.current";
inline constexpr char reserved_peak[] = "reserved_bytes.all.peak";
inline constexpr char active_current[] = "active_bytes.all.current";
inline constexpr char requested_current[] = "requested_bytes.all.current";
inline constexpr char non_releasable_current[] = "inactive_split_bytes.all.current";
inline constexpr char allocations_current[] = "allocation.all.current";
inline constexpr char active_blocks_current[] = "active.all.current";
inline constexpr char segments_current[] = "segment.all.current";
inline constexpr char inactive_splits_current[] = "inactive_split.all.current";
inline constexpr char num_ooms[] = "num_ooms";
inline constexpr char num_alloc_retries[] = "num_alloc_retries";

}  // namespace memsnap::stats::keys
