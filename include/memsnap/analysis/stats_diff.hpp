#pragma once
// Diff of two memory_summary / memory_stats captures (any mix), or the trend of one capture
// holding a series of tables. All values are ranges (see stats/range.hpp); the verdict comes
// from analysis::classify (verdict.hpp).

#include <memsnap/analysis/verdict.hpp>
#include <memsnap/stats/capture.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memsnap::analysis {

struct MetricDiff {
    ByteRange before, after;
    ByteRange delta;                    // [after.low − before.high, after.high − before.low]
    std::optional<ByteRange> per_step;  // delta / (step_after − step_before), rounded outward
};

// One table of the series, in order.
struct SeriesPoint {
    std::size_t index = 0;         // 0-based position in the series
    std::string source;            // "before" or "after"
    std::size_t line = 0;          // where the table starts in its file
    std::optional<std::int64_t> step;  // interpolated from `steps`, see diff_stats
};

struct MetricTrend {
    std::vector<ByteRange> values;  // one per SeriesPoint
    ByteRange first_to_last;        // delta between the first and last point
    // Over consecutive points, judged without noise threshold: a step is up when its delta
    // range is certainly > 0, down when certainly < 0. "rising" (all up), "non-decreasing",
    // "flat" (no certain change), "non-increasing", "falling", or "mixed".
    std::string direction;
    bool monotone = false;          // direction != "mixed"
    ByteRange slope;                // first_to_last per step, or per capture when steps unknown
    std::string slope_unit;         // "per_step" | "per_capture"
};

struct DeviceDiff {
    std::optional<int> device;
    std::map<std::string, MetricDiff> metrics;  // memory_stats keys present on both ends
    VerdictResult verdict;
    std::vector<SeriesPoint> series;            // ≥ 1 point; first and last are diffed
    std::map<std::string, MetricTrend> trends;  // allocated/reserved/active/requested/non-releasable current
    std::vector<std::string> notes;             // pairing notes and the tables' own warnings
};

struct StatsDiff {
    stats::CaptureKind before_kind = stats::CaptureKind::memory_summary;
    stats::CaptureKind after_kind = stats::CaptureKind::memory_summary;
    std::optional<std::pair<std::int64_t, std::int64_t>> steps;
    std::vector<DeviceDiff> devices;  // by device id (unknown first); never empty

    // The device with the most severe verdict (leak > fragmentation > cache_growth > shrink >
    // stable), lowest id on ties: what a one-line summary reports.
    const DeviceDiff& primary() const;
};

// Pairs tables by device and diffs the first against the last table of each device's series.
// The series is before's tables followed by after's; when `after` is the same capture as
// `before` (same tables) the file is its own series, so diff_stats(c, c, …) on a file with
// several tables gives first→last plus the trend. Captures with one device each but different
// ids (e.g. a stats dict without device vs a device-0 table) are paired with a note.
// `steps` = (step of the first table, step of the last); intermediate points get evenly spaced
// steps when the spacing is a whole number.
// Throws usage_error when steps do not increase; input_error when no device can be paired or
// allocated_bytes.all.current / reserved_bytes.all.current is missing on either end.
StatsDiff diff_stats(const stats::StatsCapture& before, const stats::StatsCapture& after,
                     std::optional<std::pair<std::int64_t, std::int64_t>> steps);

// CI gate for --fail-on-growth RATE: returns a message when allocated_bytes.all.current
// certainly grows faster than `bytes_per_step` per step (per capture interval when steps are
// unknown) on any device, i.e. when delta.low > RATE × steps. Using delta.low means the
// truncation of summary tables can never trip the gate by itself. nullopt = gate passes.
std::optional<std::string> check_growth_gate(const StatsDiff& diff, std::int64_t bytes_per_step);

}  // namespace memsnap::analysis
