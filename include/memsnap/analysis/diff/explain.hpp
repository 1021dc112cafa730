#pragma once
// Stage 3 of the snapshot diff: what the numbers mean. Reads the totals against their noise
// floor, weighs the sites by the shape of their change, and gives the verdict by the rules of
// judge/rules.hpp under the captures' comparability, per device when there are several; then
// each site's verdict, where the growth converges, the overall diagnosis and the notes. A site's diagnosis is made by
// SiteDiagnoser when a report lists the site. Returns values; edits nothing.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <optional>
#include <vector>

namespace memsnap::analysis {

// One device's totals, when the captures hold several.
struct DeviceTotalsChange {
    int device = 0;
    TotalsChange totals;
};

struct ExplainInput {
    const TotalsChange& totals;
    const std::vector<SiteGroups>& sites;  // as group_sites gives them
    const StackIndex& index;
    const Comparability& comparability;
    const util::Steps& steps;
    bool stacks_recorded = true;
    std::int64_t trace_stacks = 0;  // trace events with a stack, in both captures
    bool focused = false;           // --focus was given: sites do not add up to the totals
    std::int64_t pending_free_before = 0, pending_free_after = 0;
    // Several devices: each is judged against its own noise floor (allocator noise is per
    // device; 0.5% of all devices together would hide a leak on the smallest), and the pair
    // takes the most severe device's verdict. Empty for one device.
    std::vector<DeviceTotalsChange> devices = {};
};

struct SiteJudgement {
    Verdict verdict = Verdict::stable;
    SiteShape shape = SiteShape::stable;
    std::optional<double> share;
    bool retained_graph = false;   // one of the forward-pass sites of a retained autograd graph
    const char* reason = nullptr;  // growth of a site with a stack: why no behaviour verdict (a word)
};

struct Explanation {
    Verdict verdict = Verdict::stable;
    Facts evidence;
    std::vector<Advice> advice;
    Diagnosis overall;
    std::vector<SiteJudgement> sites;  // parallel to ExplainInput::sites
    std::optional<Convergence> convergence;
    Facts notes;
    std::int64_t noise_threshold = 0;  // of allocated memory, in bytes
};

Explanation explain(const ExplainInput& input);

// The diagnosis of one judged site: a pattern and its facts, only for a site with a stack
// whose verdict rests on comparable captures. Made on demand, for the sites a report lists: a
// capture may hold a million sites. Keeps references to its arguments.
class SiteDiagnoser {
  public:
    SiteDiagnoser(const StackIndex& index, const util::Steps& steps, const Comparability& comparability)
        : index_(index), steps_(steps), comparability_(comparability) {}
    Diagnosis operator()(const SiteGroups& site, const SiteJudgement& judgement) const;

  private:
    const StackIndex& index_;
    const util::Steps& steps_;
    const Comparability& comparability_;
};

}  // namespace memsnap::analysis
