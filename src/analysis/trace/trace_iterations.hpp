#pragma once
// Internal to `trace`: where iterations begin. From the capture's own annotations when it has
// them (ProfilerStep#N ranges of torch.profiler, or the ends of Optimizer.step); else from a
// sequence of allocations (stack and size) that repeats exactly; else nothing.

#include "trace_replay.hpp"

#include <string>
#include <vector>

namespace memsnap::analysis::detail {

struct Iterations {
    std::vector<std::size_t> starts;  // event positions, increasing; iteration k is [starts[k], starts[k+1])
    std::string source;               // "annotations: ProfilerStep", "annotations: Optimizer.step",
                                      // "repeating allocations", "none"
    std::string note;                 // why repeating allocations were not taken for iterations
    std::size_t complete() const { return starts.size() < 2 ? 0 : starts.size() - 1; }
    // The iteration holding event `position`: -1 before the first, complete() for the part after
    // the last boundary.
    long index_of(std::size_t position) const;
};

Iterations find_iterations(const snapshot::Snapshot& snap, const Replay& r, int device);

}  // namespace memsnap::analysis::detail
