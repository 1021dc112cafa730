#pragma once
// The likely cause of a site's growth, from its shape (docs/leak-patterns.md), and the advice a
// verdict carries. Snapshots record where memory was allocated, not who keeps it alive, so
// every diagnosis is a likely cause with the facts it used. Keyword patterns look at user
// code only; categories and counts decide the rest. A pattern is given only to a site with a
// stack, under a verdict whose preconditions hold (rules.hpp); the report phrases it.

#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace memsnap::analysis {

enum class Pattern : std::uint8_t {
    dataset,               // CUDA tensors made in a Dataset or collate function
    logging,               // logged tensors that keep their graph
    augmentation_cache,    // an unbounded cache of GPU tensors
    retained_tensors,      // tensors kept by a reference between steps
    retained_graph,        // one autograd graph kept per step (many forward sites alike)
    retained_graph_site,   // a forward site of such a graph
    gradient_growth,       // gradients that keep growing
    growing_tensor,        // tensors that grow with the data
    optimizer_first_step,  // gradients and optimizer state at the first step
    workspace_warmup,      // cuBLAS/cuDNN workspaces on first use
    autocast_cache,        // autocast's low-precision weight copies
    one_time_growth,       // a jump, then flat
    sawtooth,              // memory that comes and goes
    fragmentation,
    cache_growth,
    device_full,          // OOM: live tensors fill the device
    fragmentation_oom,    // OOM: enough free cache, no block big enough
    other_process,        // OOM: another process holds the device
    single_huge_request,  // OOM: one request larger than the device
};
std::string_view to_string(Pattern pattern);
std::span<const Pattern> all_patterns();

struct Diagnosis {
    std::optional<Pattern> pattern;
    Facts evidence;
    std::optional<SiteKey> site;  // the leading site, for a diagnosis of the whole comparison
    std::optional<double> share;  // its share of the growth
    bool empty() const { return !pattern; }
};

// What the diagnosis of one site looks at.
struct SiteFacts {
    Verdict verdict = Verdict::stable;
    Category category = Category::unknown;
    std::int64_t before_blocks = 0, after_blocks = 0, delta_blocks = 0;
    std::int64_t new_blocks = 0, gone_blocks = 0, delta_bytes = 0;
    double growth_bytes_per_step = 0;
    bool steps_known = false;
    std::int64_t step_distance = 0;
    std::vector<FrameText> user_frames;  // user frames of its growing stacks
};

Diagnosis diagnose_site(const SiteFacts& site);
// The counts of a site as a fact (FactKind::site_counts).
Fact site_counts(const SiteFacts& site);

// What to do next, for a verdict; the report phrases each.
enum class Advice : std::uint8_t {
    leak_kept,             // blocks allocated between the captures are kept
    leak_references,       // look for references kept across steps
    leak_detach,           // keep numbers or detached copies
    leak_take_snapshots,   // summaries cannot say where: take snapshots
    caveat_same_workload,  // the behaviour rests on the same sites, not on one process shown
    one_time_not_leak,
    compare_after_warmup,
    shape_bucket,
    growth_cannot_tell,
    growth_one_run,    // to find a leak, take both captures in one run
    growth_summaries,  // summaries cannot show one process: snapshots, or one log's series
    growth_order,      // give --steps or step words to judge behaviour
    fragmentation_not_leak,
    fragmentation_fix,
    cache_not_leak,
    cache_fix,
    shrink_nothing,
    stable_nothing,
    ooms_without_growth,
    retries_near_limit,
    caveat_one_log,           // summaries: the behaviour rests on the tables being one log, in order
    leak_kept_summaries,      // summaries: allocated memory grew and stayed; no sites to name
    cache_levels,             // cache growth between captures compared as levels: another peak, not growth
    shrink_levels,            // shrink between captures compared as levels: less memory, not memory freed
    order_contradicted,       // the captures contradict the order given: give it right, or take one run
    cache_levels_live_lower,  // cache growth between levels while live memory is lower: an earlier peak
};
std::string_view to_string(Advice advice);

struct AdviceContext {
    bool from_snapshots = false;   // stacks and sites back the verdict
    bool snapshot_inputs = false;  // the captures are snapshots, whether or not they hold stacks
    bool caveat = false;           // behaviour rests on the same workload, not on one process shown
    bool order_known = true;
    bool one_process_ruled_out = false;
    bool behaviour = true;            // behaviour verdicts may be given (Comparability::behaviour_allowed)
    bool order_contradicted = false;  // a clock or counter runs backwards in the order given
    bool new_ooms = false, new_retries = false;
    bool live_flat = false;  // allocated memory within its noise floor: the levels differ in cache only
    bool live_fell = false;  // allocated memory fell beyond its noise floor

    // live_flat and live_fell from a reading of the totals.
    void read_live_change(const TotalsReading& reading);
};
std::vector<Advice> advice_for(Verdict verdict, const AdviceContext& context);

}  // namespace memsnap::analysis
