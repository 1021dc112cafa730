#pragma once
// `memsnap info` output for memory_summary / memory_stats captures.

#include <memsnap/stats/capture.hpp>

#include <string>

namespace memsnap::report {

// {"schema_version": 1, "kind": "memory_summary"|"memory_stats", "tables": [{"device",
// "line", "layout", "num_ooms", "num_alloc_retries", "stats": {key: {"low", "high"}},
// "warnings"}]}; device / num_ooms / num_alloc_retries null when unknown. Sorted keys,
// 2-space indentation, trailing newline.
std::string render_stats_info_json(const stats::StatsCapture& capture);

// Human summary per table: device, layout, allocated/reserved/active/requested/non-releasable
// current and peak as ranges, OOMs and retries, warnings.
std::string render_stats_info_text(const stats::StatsCapture& capture);

}  // namespace memsnap::report
