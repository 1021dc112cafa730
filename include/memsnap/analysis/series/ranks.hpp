#pragma once
// `memsnap ranks`: one capture per rank of one job, taken at the same step. One rank that
// leaks, or holds more than the others, stands out from the median rank; this names it, and
// the sites and categories where it differs.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// What a rank held when it ran out of memory, replayed from its trace to its last explained
// out-of-memory event: its snapshot, taken after, holds what the error left.
struct RankOomMoment {
    int device = 0;
    std::size_t event = 0;      // position in the device's trace
    std::int64_t time_us = -1;  // as the trace gives it
    std::int64_t allocated_bytes = 0, reserved_bytes = 0;
    std::array<CategoryUsage, category_count> categories{};  // bytes only
    std::vector<SiteUsage> sites;                            // by bytes
};

struct RankCapture {
    std::optional<std::int64_t> rank;  // from the file name (or the device); else the order given
    std::string file;
    SnapshotContents info;      // describe_snapshot with every site
    std::optional<int> device;  // a device of one capture compared as a rank
    std::optional<RankOomMoment> oom_moment;
};

struct RankSummary {
    std::int64_t rank = 0;
    std::string file;
    MemoryTotals totals;
    std::array<CategoryUsage, category_count> categories{};
    std::vector<SiteUsage> top_sites;  // by bytes, at most options.top
};

struct SiteDelta {
    SiteKey site;
    Category category = Category::unknown;
    std::int64_t bytes = 0, median_bytes = 0, delta_bytes = 0;
};

struct RankOutlier {
    std::int64_t rank = 0;
    Verdict verdict = Verdict::growth;  // growth (above the median) or shrink (below): levels
    std::string file;
    std::int64_t allocated_bytes = 0, delta_bytes = 0;          // against the median rank
    std::vector<SiteDelta> sites;                               // by |delta|, beyond the noise
    std::vector<std::pair<Category, std::int64_t>> categories;  // delta against the median rank's
    // Out-of-memory events in the rank's trace: its snapshot came after them, so its levels are
    // what they left (a cache the failed step's tensors were freed into), not what filled it.
    std::int64_t ooms = 0;
    std::optional<int> device;  // when the ranks are one capture's devices
    // Set when the levels above are those of its out-of-memory moment (replayed from its trace),
    // against the median of the ranks' snapshots; then what its own snapshot holds.
    std::optional<RankOomMoment> oom_moment;
    std::int64_t snapshot_allocated_bytes = 0;
    std::optional<std::int64_t> trace_first_us;  // of the rank's trace, for the moment's offset
};

struct RanksResult {
    std::string rank_source;         // "file names", "devices" or "order given"
    std::vector<RankSummary> ranks;  // by rank
    std::int64_t median_rank = 0;    // the rank at the median of allocated: outliers' categories against its
    struct Median {
        std::int64_t allocated_bytes = 0, reserved_bytes = 0, active_bytes = 0, inactive_split_bytes = 0;
        std::array<std::int64_t, category_count> category_bytes{};
    } median;
    std::int64_t noise_bytes = 0;       // how far from the median a rank may be and not stand out
    std::vector<RankOutlier> outliers;  // by |delta|; none when the ranks hold different parts
    // The ranks run one workload (the same sites): only then does a rank stand out.
    Answer same_workload = Answer::unknown;
    Facts notes;
    Facts warnings;  // also for standard error: captures of different projects, steps or devices
};

// Throws Error (input) for fewer than two captures, (usage) for ranks named twice.
RanksResult compare_ranks(std::vector<RankCapture> captures, const AnalysisOptions& options);

// What a rank's capture held at its last out-of-memory event (of `device`, else of any device);
// none without one.
std::optional<RankOomMoment> rank_oom_moment(const snapshot::Snapshot& snap, std::optional<int> device,
                                             const AnalysisOptions& options);

// The devices of one multi-device capture as ranks (DataParallel replicas, or the stages of a
// model split across devices).
std::vector<RankCapture> devices_as_ranks(const snapshot::Snapshot& snap, const std::string& file,
                                          const AnalysisOptions& options);

// The listed sites of each rank, as two-frame stacks "rank N;site".
StackProfile ranks_stacks(const RanksResult& ranks);

}  // namespace memsnap::analysis
