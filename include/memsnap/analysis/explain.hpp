#pragma once
// Stage 3 of the snapshot diff: what the numbers mean. Weighs the totals (allocated, reserved,
// non-releasable, each against its noise floor) with the sites (new blocks that stay, their
// categories, their counts) and with whether both captures come from one process, and gives
// the verdict, each site's verdict and diagnosis, where growth converges, and notes. Returns
// values; edits nothing.
//
//   In one process, sites whose blocks are new and stay (more blocks than before, not a
//   first appearance of gradients, optimizer state, workspaces or autocast copies) are a
//   leak when together they exceed the noise floor of allocated memory, even when frees
//   elsewhere hide them in the totals. When allocated grows beyond the floor otherwise, the
//   largest explanation wins: new blocks that stay (leak), first appearances
//   (one_time_growth), or as many blocks with more bytes (shape_growth). Captures that cannot
//   be shown to come from one process give `growth`, never `leak`. No site verdict
//   contradicts the overall one.

#include <memsnap/analysis/diff_model.hpp>
#include <memsnap/analysis/group_sites.hpp>
#include <memsnap/analysis/stack_index.hpp>

#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

struct ExplainInput {
    const TotalsChange& totals;
    const std::vector<SiteGroups>& sites;  // as group_sites gives them
    const StackIndex& index;
    const SameProcess& same_process;
    const util::Steps& steps;
    bool stacks_recorded = true;
    std::int64_t trace_stacks = 0;  // trace events with a stack, in both captures
    bool focused = false;           // --focus was given: sites do not add up to the totals
    std::int64_t pending_free_before = 0, pending_free_after = 0;
};

struct SiteJudgement {
    SiteVerdict verdict = SiteVerdict::stable;
    Diagnosis diagnosis;
    std::optional<double> share;
};

struct Explanation {
    VerdictResult verdict;
    Diagnosis overall;
    std::vector<SiteJudgement> sites;  // parallel to ExplainInput::sites
    std::optional<Convergence> convergence;
    std::vector<std::string> notes;
};

Explanation explain(const ExplainInput& input);

}  // namespace memsnap::analysis
