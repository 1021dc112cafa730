#pragma once
// Internal to the snapshot diff: the evidence that bears on two snapshots' origin (one process,
// the same workload), gathered for judge/comparability.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/diff/match_blocks.hpp>
#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/trace_overlap.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

namespace memsnap::analysis::detail {

struct PairOrigin {
    const snapshot::Snapshot& before;
    const snapshot::Snapshot& after;
    const BlockMatch& match;
    const StackIndex& index;
    const DeviceSets& devices;
    std::optional<int> device;
    const TraceOverlap& trace;
    const std::vector<SiteGroups>& sites;
    std::int64_t allocated_before = 0, allocated_after = 0;
};

Comparability compare_origins(const PairOrigin& pair);

}  // namespace memsnap::analysis::detail
