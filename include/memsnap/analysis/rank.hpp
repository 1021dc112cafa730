#pragma once
// Stage 4 of the snapshot diff: sites in the order a reader needs them: leak sites first, then
// by growth per step, then bytes after, then name (so the order never depends on anything but
// the data); numbered, with their verdicts, diagnoses and representative stacks; and every
// changed (stack, size) group for flame graphs.

#include <memsnap/analysis/explain.hpp>
#include <memsnap/analysis/group_sites.hpp>
#include <memsnap/analysis/stack_index.hpp>

#include <vector>

namespace memsnap::analysis {

struct RankedSites {
    std::vector<SiteChange> sites;  // ranked, with verdict, diagnosis and share
    std::vector<RepresentativeStack> changed_stacks;
};

// `judged` is parallel to `sites` (explain's output).
RankedSites rank_sites(std::vector<SiteGroups> sites, const std::vector<SiteJudgement>& judged,
                       const StackIndex& index, bool stacks_recorded);

// A group as frames a writer can print.
RepresentativeStack representative(const GroupKey& key, const GroupCounts& counts, const StackIndex& index);

}  // namespace memsnap::analysis
