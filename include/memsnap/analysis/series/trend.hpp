#pragma once
// `memsnap trend`: growth over many captures of one run. Two captures cannot tell a leak from
// one-time growth (warm-up, the first optimizer step, a cache that fills once); a series can.
// Each total, category and site gets a least-squares slope against the step, its R², the
// share of intervals that did not go down, and a verdict from the shape of the series.

#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/stats/capture.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// The fit of one series of byte counts over the steps (the points after --warmup).
struct SeriesFit {
    double slope_bytes_per_step = 0;         // least squares; per capture when steps are unknown
    double r2 = 0;                           // 1 for a series that does not move
    double monotonic_share = 1;              // share of intervals that did not decrease
    std::optional<std::int64_t> first_step;  // the first step with any bytes
    // leak (steady growth after warm-up), one_time (a jump, then flat), sawtooth (it grows
    // and is freed again), shape_growth (the same number of blocks, bigger), irregular
    // (growth that fits none of these), shrinking, or stable.
    std::string verdict = "stable";
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
    std::vector<std::int64_t> bytes_by_step, blocks_by_step;
    SeriesFit fit;
    Diagnosis diagnosis;
};

struct TrendResult {
    std::string kind;  // "snapshot", "memory_summary" or "memory_stats"
    // One per capture, in step order; for a series of logs with several tables each, the
    // files as given.
    std::vector<std::string> files;
    std::vector<std::int64_t> steps;  // one per capture: the step, or its position when unknown
    std::string steps_source;         // "--steps", "file names", "log lines", "trace time", "order given"
    bool steps_known = false;
    std::size_t warmup = 0;  // intervals skipped by the fit
    std::optional<int> device;
    std::vector<TrendSeries> totals;
    std::vector<TrendSeries> categories;  // snapshots only
    std::vector<TrendSite> sites;         // by score, at most options.top (0: 1000)
    std::size_t sites_total = 0;
    std::string verdict;  // leak, one_time, sawtooth, cache_growth, irregular or stable
    std::vector<std::string> evidence;
    std::vector<std::string> notes;
    std::vector<std::string> warnings;
};

struct TrendOptions {
    std::vector<std::int64_t> steps;  // --steps, one per capture (empty: find them)
    std::size_t warmup = 0;           // --warmup N: intervals skipped
};

// Fits one series. `noise` is the change below which an interval counts as flat.
SeriesFit fit_series(const std::vector<std::int64_t>& steps, const std::vector<std::int64_t>& bytes,
                     const std::vector<std::int64_t>* blocks, std::size_t warmup, std::int64_t noise);

// One capture of a snapshot series, reduced to what the trend needs (describe_snapshot with
// every site), so that a long series is never held whole.
struct SeriesCapture {
    std::string file;
    SnapshotContents info;
};

// Throws Error (usage) for --steps of the wrong count, (input) for fewer than two captures.
TrendResult trend_snapshots(std::vector<SeriesCapture> captures, const AnalysisOptions& options,
                            const TrendOptions& trend);
// The tables of every capture, in order, for one device (options.device or the first).
TrendResult trend_stats(const std::vector<stats::StatsCapture>& captures, const AnalysisOptions& options,
                        const TrendOptions& trend);

// --fail-on-growth: the message when allocated memory or a site grows faster than
// `bytes_per_step` (a leak or one-time growth that continues), nullopt when the gate passes.
std::optional<std::string> check_trend_gate(const TrendResult& trend, std::int64_t bytes_per_step);

// The sites of a trend as one-frame stacks, from the first capture after warm-up (before) to
// the last (after): a trend keeps sites, not stacks.
StackProfile trend_stacks(const TrendResult& trend);

}  // namespace memsnap::analysis
