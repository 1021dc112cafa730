#pragma once
// `memsnap trend`: growth over many captures. Two captures cannot tell a leak from one-time
// growth (warm-up, the first optimizer step, a cache that fills once); a series can, when its
// captures are comparable (judge/comparability.hpp, for each neighbouring pair) and in a known
// order (--steps, step words in the file names, or the trace clock of one process). Each
// total, category and site gets a least-squares slope against the step, its R², the share of
// intervals that did not go down, and a verdict from the shape of the series (judge/rules.hpp);
// without comparability or order, the series are compared as levels.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/stats/capture.hpp>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// The fit of one series of byte counts over the steps (the points after --warmup).
struct SeriesFit {
    double slope_bytes_per_step = 0;         // least squares; per capture when steps are unknown
    double r2 = 0;                           // 1 for a series that does not move, for the rules
    bool r2_defined = false;                 // false when nothing moves: no R² to show (null)
    double monotonic_share = 1;              // share of intervals that did not decrease
    std::optional<std::int64_t> first_step;  // the first step with any bytes
    Verdict verdict = Verdict::stable;
    double score = 0;  // slope weighted by confidence (R² and monotonic share): the rank order
};

struct TrendSeries {
    std::string name;                  // total name, or category name
    std::vector<std::int64_t> bytes;   // one per capture (summaries: the middle of the range)
    std::vector<std::int64_t> blocks;  // one per capture; empty for totals
    SeriesFit fit;
};

struct TrendSite {
    std::size_t rank = 0;
    SiteKey site;
    Category category = Category::unknown;
    bool has_stack = true;
    std::vector<std::int64_t> bytes_by_step, blocks_by_step;
    SeriesFit fit;
    Diagnosis diagnosis;
};

// A point of the series. Its file is an index into TrendResult::files, not a copy: a log of
// 300 000 tables has as many points, all from one file.
struct TrendFile {
    std::size_t file = 0;
    std::int64_t step = 0;  // the step, or its position when steps are unknown
};

// What a series is made of; spelt as JSON's input_kind.
enum class SeriesKind { snapshot, memory_summary, memory_stats };
std::string_view to_string(SeriesKind kind);

struct TrendResult {
    SeriesKind kind = SeriesKind::snapshot;
    // One per capture, in the order judged: by step, else as given (or by one process's trace
    // clock). For a series of logs with several tables each, the files as given.
    std::vector<std::string> files;
    std::vector<TrendFile> points;  // each point's file and step, in order
    const std::string& file_of(const TrendFile& point) const { return files[point.file]; }
    std::vector<std::int64_t> steps;  // one per capture: the step, or its position when unknown
    std::string steps_source;         // "--steps", "file names", "log lines", "trace time", "order given"
    bool steps_known = false;
    std::size_t warmup = 0;  // intervals skipped by the fit
    std::optional<int> device;
    Comparability comparability;  // of the whole series: its weakest neighbouring pair
    std::vector<TrendSeries> totals;
    std::vector<TrendSeries> categories;  // snapshots only
    std::vector<TrendSite> sites;         // by score, at most options.top (0: 1000); leaks always
    std::size_t sites_total = 0;
    Verdict verdict = Verdict::stable;  // from the totals and the sites together
    Facts evidence;
    std::vector<Advice> advice;
    Facts notes;
    Facts warnings;
};

struct TrendOptions {
    std::vector<std::int64_t> steps;  // --steps, one per capture (empty: find them)
    std::size_t warmup = 0;           // --warmup N: intervals skipped
};

// Fits one series. `noise` is the change below which an interval counts as flat. Without a
// known order (`ordered` false) the verdict and the rank order do not depend on the order of
// the points; slope, R² and the share not down are then not meaningful and reports omit them.
SeriesFit fit_series(const std::vector<std::int64_t>& steps, const std::vector<std::int64_t>& bytes,
                     const std::vector<std::int64_t>* blocks, std::size_t warmup, std::int64_t noise,
                     bool behaviour_allowed, bool ordered = true);

// One capture of a snapshot series, reduced to what the trend needs (describe_snapshot with
// every site), so that a long series is never held whole.
struct SeriesCapture {
    std::string file;
    SnapshotContents info;
};

// Throws Error (usage) for --steps of the wrong count, (input) for fewer than two captures.
TrendResult trend_snapshots(std::vector<SeriesCapture> captures, const AnalysisOptions& options,
                            const TrendOptions& trend);
// One memory_summary / memory_stats file of a series, its tables reduced to what a trend
// judges by as they are read (add), so that a log of 300 000 tables is never held whole: per
// table its step, device, five totals and the cumulative counters (".allocated", ".freed")
// that tell one process from several.
class SummarySeriesFile {
  public:
    static constexpr std::size_t total_count = 5;
    struct Table {
        std::optional<std::int64_t> step;
        std::optional<int> device;
        std::array<ByteRange, total_count> totals{};  // see SummarySeriesFile::total_keys
        std::uint8_t totals_present = 0;              // bit k: totals[k] was tracked
        // The torch version its rows tell (TableLayout::Generation), and its backend: one
        // process runs one of each.
        std::uint8_t generation = 0;
        bool cuda_malloc_async = false;
        std::uint32_t first_counter = 0, counter_count = 0;  // in counters(), by key text
    };
    struct Counter {
        std::uint32_t key = 0;  // in counter_key()
        ByteRange range;
    };
    // The metric names of the totals (allocated_bytes, ...) and the keys they are read from.
    static const std::array<std::pair<const char*, const char*>, total_count>& total_keys();

    explicit SummarySeriesFile(std::string file = {}) : file_(std::move(file)) {}
    void add(const stats::StatsTable& table);
    void set_kind(stats::CaptureKind kind) { kind_ = kind; }

    const std::string& file() const { return file_; }
    stats::CaptureKind kind() const { return kind_; }
    // A deque: growing it never copies what was kept, nor holds it twice.
    const std::deque<Table>& tables() const { return tables_; }
    const std::deque<Counter>& counters() const { return counters_; }
    std::string_view counter_key(std::uint32_t key) const { return keys_[key]; }
    // Reader warnings, each with its table's index, in table order (text captures keep their
    // first few).
    const std::vector<std::pair<std::uint32_t, std::string>>& warnings() const { return warnings_; }

  private:
    std::string file_;
    stats::CaptureKind kind_ = stats::CaptureKind::memory_summary;
    std::deque<Table> tables_;
    std::deque<Counter> counters_;
    std::vector<std::string> keys_;
    std::map<std::string, std::uint32_t, std::less<>> key_ids_;
    std::vector<std::pair<std::uint32_t, std::string>> warnings_;
};

// Every file's tables, in order, for one device (options.device or the first any table names).
TrendResult trend_stats(const std::vector<SummarySeriesFile>& files, const AnalysisOptions& options,
                        const TrendOptions& trend);
// The same from whole captures.
TrendResult trend_stats(const std::vector<stats::StatsCapture>& captures, const AnalysisOptions& options,
                        const TrendOptions& trend);

// The sites of a trend as one-frame stacks, from the first capture after warm-up (before) to
// the last (after): a trend keeps sites, not stacks.
StackProfile trend_stacks(const TrendResult& trend);

}  // namespace memsnap::analysis
