#pragma once
// Diff of two memory_summary / memory_stats captures (any mix), or the trend of one capture
// holding a series of tables. All values are ranges (see stats/range.hpp); the totals are read
// by verdict.hpp and weighed with the allocation count and the cumulative counters.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/stats_tables.hpp>
#include <memsnap/stats/capture.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
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
    std::size_t index = 0;             // 0-based position in the series
    std::string source;                // "before" or "after"
    std::size_t line = 0;              // where the table starts in its file
    std::optional<std::int64_t> step;  // interpolated from the steps, see diff_stats
};

// Over consecutive points, judged without noise threshold: a step is up when its delta range
// is certainly > 0, down when certainly < 0. rising: all up; flat: no certain change; mixed:
// some up and some down.
enum class Direction { rising, non_decreasing, flat, non_increasing, falling, mixed };
std::string_view to_string(Direction direction);
enum class SlopeUnit { per_step, per_capture };
std::string_view to_string(SlopeUnit unit);

struct MetricTrend {
    std::vector<ByteRange> values;  // one per SeriesPoint
    ByteRange first_to_last;        // delta between the first and last point
    Direction direction = Direction::flat;
    bool monotone = false;  // direction != mixed
    ByteRange slope;        // first_to_last per step, or per capture when steps unknown
    SlopeUnit slope_unit = SlopeUnit::per_capture;
};

struct DeviceDiff {
    std::optional<int> device;
    std::map<std::string, MetricDiff> metrics;  // memory_stats keys present on both ends
    Verdict verdict = Verdict::stable;
    Facts evidence;
    std::vector<Advice> advice;
    std::vector<SeriesPoint> series;            // ≥ 1 point; first and last are diffed
    std::map<std::string, MetricTrend> trends;  // allocated/reserved/active/requested/non-releasable current
    std::vector<std::string> missing;           // key metrics not in both tables
    Facts notes;                                // pairing notes and the tables' own warnings
};

struct StatsDiff {
    std::string before_file, after_file;
    stats::CaptureKind before_kind = stats::CaptureKind::memory_summary;
    stats::CaptureKind after_kind = stats::CaptureKind::memory_summary;
    util::Steps steps;
    // From the cumulative counters (summaries carry no addresses) and, for one log's series,
    // the one workload.
    Comparability comparability;
    DeviceSets device_sets;           // devices named by the tables of each side
    std::vector<DeviceDiff> devices;  // by device id (unknown first); never empty
    Facts warnings;

    // The device with the most severe verdict, lowest id on ties: what a one-line summary
    // reports.
    const DeviceDiff& primary() const;
};

// Pairs tables by device and diffs the first against the last table of each device's series.
// The series is before's tables followed by after's; when `after` holds the same tables as
// `before` the file is its own series, so diff_stats(c, c, …) on a file with several tables
// gives first→last plus the trend. Captures with one device each but different ids are paired
// with a note. Intermediate points get evenly spaced steps when the spacing is whole.
// Tables may hold any subset of rows: what both hold is compared and the rest is named.
// Throws Error (input) when no device can be paired, when options.device is in neither
// capture, or when neither allocated nor reserved memory is in both tables.
StatsDiff diff_stats(const stats::StatsCapture& before, const stats::StatsCapture& after,
                     const AnalysisOptions& options);

}  // namespace memsnap::analysis
