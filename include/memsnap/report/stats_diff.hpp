#pragma once
// Output of `memsnap diff` for memory_summary / memory_stats captures. Writers only format
// analysis::StatsDiff; they compute nothing.

#include <memsnap/analysis/stats_diff.hpp>

#include <string>
#include <string_view>

namespace memsnap::report {

// The diff itself and the CI gate live in analysis; re-exported for callers of the report layer.
using analysis::check_growth_gate;
using analysis::diff_stats;

// format: "text" | "json" | "markdown" | "csv". Throws usage_error for any other format.
// json:  {"schema_version": 1, "kind": "summary_diff", "device", "steps": [a, b] | null,
//         "verdict", "evidence", "advice", "metrics": {key: {"before", "after", "delta",
//         "per_step" | null}}, "series": [{index, source, line, step, values}], "trends",
//         "notes", "devices": [...]} — top level is the primary device (StatsDiff::primary),
//         "devices" holds every paired device in the same shape.
// csv:   one row per device and metric, header line first.
std::string render_stats_diff(const analysis::StatsDiff& diff, std::string_view format);

// The single formats (render_stats_diff dispatches to these).
std::string render_stats_diff_text(const analysis::StatsDiff& diff);
std::string render_stats_diff_markdown(const analysis::StatsDiff& diff);
std::string render_stats_diff_json(const analysis::StatsDiff& diff);
std::string render_stats_diff_csv(const analysis::StatsDiff& diff);

}  // namespace memsnap::report
