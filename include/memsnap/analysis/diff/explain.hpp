#pragma once
// Stage 3 of the snapshot diff: what the numbers mean. Weighs the totals (allocated, reserved,
// non-releasable, each against its noise floor) with the sites (new blocks that stay, their
// categories, their counts) and with whether both captures come from one process, and gives
// the verdict, each site's verdict, where growth converges, and notes; a site's diagnosis
// (text) is made by SiteDiagnoser when a report lists the site. Returns values; edits
// nothing.
//
//   In one process, sites whose blocks are new and stay (more blocks than before, not a
//   first appearance of gradients, optimizer state, workspaces or autocast copies) are a
//   leak when together they exceed the noise floor of allocated memory, even when frees
//   elsewhere hide them in the totals. When allocated grows beyond the floor otherwise, the
//   largest explanation wins: new blocks that stay (leak), first appearances
//   (one_time_growth), or as many blocks with more bytes (shape_growth). Captures that cannot
//   be shown to come from one process give `growth`, never `leak`. No site verdict
//   contradicts the overall one.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

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
    std::optional<double> share;
    bool retained_graph = false;  // one of the forward-pass sites of a retained autograd graph
};

struct Explanation {
    VerdictResult verdict;
    Diagnosis overall;
    std::vector<SiteJudgement> sites;  // parallel to ExplainInput::sites
    std::optional<Convergence> convergence;
    std::vector<std::string> notes;
    std::int64_t noise_threshold = 0;  // of allocated memory, in bytes
};

Explanation explain(const ExplainInput& input);

// The diagnosis of one judged site: likely cause, fix and evidence. Made on demand, for the
// sites a report lists: diagnoses are text, and a capture may hold a million sites. Keeps
// references to its arguments.
class SiteDiagnoser {
  public:
    SiteDiagnoser(const StackIndex& index, const util::Steps& steps, const SameProcess& same_process,
                  std::int64_t noise_threshold)
        : index_(index), steps_(steps), same_process_(same_process), noise_threshold_(noise_threshold) {}
    Diagnosis operator()(const SiteGroups& site, const SiteJudgement& judgement) const;

  private:
    const StackIndex& index_;
    const util::Steps& steps_;
    const SameProcess& same_process_;
    std::int64_t noise_threshold_;
};

}  // namespace memsnap::analysis
