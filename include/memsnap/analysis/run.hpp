#pragma once
// The one analysis entry point for every capture kind: `info` of one capture, `diff` of two,
// and the CI gate on a diff. The CLI calls these and hands the result to report::render.

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/info.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/capture/capture.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace memsnap::analysis {

struct StatsInfo {
    stats::StatsCapture capture;  // the listed tables of options.device (all devices when none)
    std::optional<int> device;
    // --top N keeps the first ceil(N/2) and the last floor(N/2) tables of a long series: the
    // `omitted` tables in between would have been listed from position `omitted_at`.
    std::size_t omitted = 0, omitted_at = 0;
    std::size_t tables_total() const { return capture.tables.size() + omitted; }
    // The 1-based number of the i-th listed table in the whole capture.
    std::size_t table_number(std::size_t i) const { return i < omitted_at ? i + 1 : i + 1 + omitted; }
};

using InfoResult = std::variant<SnapshotInfo, StatsInfo>;
using DiffResult = std::variant<SnapshotDiff, StatsDiff>;

// Compiles every pattern of the options (--user-code, --not-user-code, --hide, --focus):
// throws Error (usage) for one that does not compile, before any file is read.
void validate(const AnalysisOptions& options);

// Throws Error: usage for invalid options, input for a device the capture does not hold.
InfoResult info(const capture::Capture& capture, const AnalysisOptions& options);

// Two snapshots, or two summary/stats captures in any mix. Throws Error (usage) for a
// snapshot against a summary; see diff_snapshots and diff_stats for the rest.
DiffResult diff(const capture::Capture& before, const capture::Capture& after, const AnalysisOptions& options);

// --fail-on-growth RATE: the message when allocated memory (or, for snapshots, a site)
// certainly grows faster than `bytes_per_step` per step (per capture when steps are unknown);
// nullopt when the gate passes. Summary ranges trip it only by their lower end, so rounding
// alone never does.
std::optional<std::string> check_growth_gate(const DiffResult& diff, std::int64_t bytes_per_step);

// What the user should see on standard error besides the report (devices that differ).
const std::vector<std::string>& warnings_of(const DiffResult& diff);

}  // namespace memsnap::analysis
