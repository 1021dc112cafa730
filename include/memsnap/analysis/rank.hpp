#pragma once
// Stage 3 of the snapshot diff: sites ordered by growth per step, then bytes after, then name
// (so the order never depends on anything but the data), numbered, with their representative
// stacks; and every changed (stack, size) group for flame graphs.

#include <memsnap/analysis/group_sites.hpp>
#include <memsnap/analysis/stack_index.hpp>

#include <vector>

namespace memsnap::analysis {

struct RankedSites {
    std::vector<SiteGroups> sites;  // ranked; each group list ordered by |change|
    std::vector<RepresentativeStack> changed_stacks;
};

RankedSites rank_sites(std::vector<SiteGroups> sites, const StackIndex& index, bool stacks_recorded);

// A group as frames a writer can print.
RepresentativeStack representative(const GroupKey& key, const GroupCounts& counts, const StackIndex& index);

}  // namespace memsnap::analysis
