#pragma once
// The result of diffing two snapshots, and the pieces its stages pass on. Pure data for the
// reports: every figure a writer prints is here.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/moments.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/util/steps.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// One total across both captures.
struct TotalChange {
    std::int64_t before = 0;
    std::int64_t after = 0;
    std::int64_t delta = 0;
    double per_step = 0;  // delta / (B - A), or delta when steps are unknown
};

struct TotalsChange {
    TotalChange allocated, reserved, active, requested, inactive, inactive_split, releasable, non_releasable;
    struct Field {
        const char* name;  // the JSON key, as memory_stats names it ("allocated_bytes")
        TotalChange TotalsChange::*member;
    };
    // Every total in report order.
    static const std::array<Field, 8>& fields();
};

// What a site holds in each capture: all that grouping knows, before any judgement.
struct SiteCounts {
    SiteKey site;
    Category category = Category::unknown;  // as site.category
    std::int64_t before_bytes = 0, after_bytes = 0, delta_bytes = 0;
    std::int64_t before_blocks = 0, after_blocks = 0, delta_blocks = 0;
    std::int64_t new_blocks = 0, gone_blocks = 0, survivor_blocks = 0;
    double growth_bytes_per_step = 0;
    bool has_stack = true;  // false: blocks without a stack, grouped by size
};

struct SiteChange : SiteCounts {
    std::size_t rank = 0;         // 1-based
    std::optional<double> share;  // of the allocated change; none within the noise floor
    Verdict verdict = Verdict::stable;
    // Growth at a site with a stack: why no behaviour verdict (FactKind::growth_reason's word;
    // a word, not a Fact, because a diff may hold a hundred thousand sites).
    const char* reason = nullptr;
    Diagnosis diagnosis;
    std::vector<RepresentativeStack> stacks;  // the biggest changes first, at most 3
    StacksNotShown stacks_not_shown;          // the site's other (stack, size) groups
};

struct CategoryChange {
    std::int64_t before_bytes = 0, after_bytes = 0;
    std::int64_t before_blocks = 0, after_blocks = 0;
    std::int64_t delta_bytes() const { return after_bytes - before_bytes; }
};

// Where the growth converges in the calling-context graph: the deepest frame through which
// most of the growth passes (e.g. one model.forward over many small op sites).
struct Convergence {
    FrameText frame;
    std::int64_t inclusive_bytes = 0;
    std::int64_t exclusive_bytes = 0;
    double share = 0;       // of all positive growth
    std::size_t sites = 0;  // growing sites below it
};

struct DeviceSets {
    std::vector<int> before, after;  // devices holding segments (or tables)
    // Both hold devices, not the same: a capture of nothing (taken before the GPU was used)
    // holds no device to differ.
    bool differ() const { return !before.empty() && !after.empty() && before != after; }
};

struct SnapshotDiff {
    std::string before_file, after_file;
    util::Steps steps;
    std::optional<int> device;  // --device
    DeviceSets devices;
    Comparability comparability;  // before any verdict; filters never change it
    TotalsChange totals;
    Verdict verdict = Verdict::stable;
    Facts evidence;              // the figures the verdict rests on
    std::vector<Advice> advice;  // what to do next
    Diagnosis overall;           // the step-level picture for the top of the report
    Facts headline;              // what the first lines say besides the verdict: OOMs, caveats
    // Each side's peak of allocated memory from its trace (the top level fills these in);
    // none for a side without a trace.
    std::optional<Peak> peak_before, peak_after;
    std::array<CategoryChange, category_count> categories{};
    bool stacks_recorded = true;                                       // false: grouped by block size alone
    bool stacks_recorded_before = true, stacks_recorded_after = true;  // each side's live blocks, one at least
    std::int64_t pending_free_before = 0, pending_free_after = 0;      // counted apart
    std::int64_t live_blocks_before = 0, live_blocks_after = 0;
    std::int64_t survivors = 0, new_blocks = 0, gone_blocks = 0;
    std::optional<Convergence> convergence;
    std::vector<SiteChange> sites;  // the listed sites, ranked (top and min-growth applied)
    std::size_t sites_total = 0;    // every site with live blocks in either capture
    std::size_t sites_beyond_top = 0, sites_below_min_growth = 0;
    std::int64_t sites_not_listed_delta_bytes = 0;  // listed deltas + this = every site's
    std::optional<SiteChange> fastest_site;         // the fastest-growing site of all, for the gate
    // With AnalysisOptions::stack_samples: the stacks live on either side (all, or those that
    // changed), once, with their bytes before and after (all sizes together); for pictures.
    std::vector<ProfileSample> stack_samples;
    std::vector<FrameText> frame_table;  // the frames of every stack above
    Facts notes;
    Facts warnings;  // also for standard error: devices that differ, the files' own warnings
};

}  // namespace memsnap::analysis
