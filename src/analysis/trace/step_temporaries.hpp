#pragma once
// Internal to `trace`: an optimizer step's temporaries. A stack inside an optimizer's step
// files an allocation as optimizer state, but the step also makes tensors it frees again
// before it returns (the intermediate terms of an update). PyTorch's memory timeline calls
// those temporary. Told here from the trace: an allocation made in a step and freed before any
// allocation whose stack is outside a step.

#include "trace_replay.hpp"

#include <memsnap/analysis/sites/stack_index.hpp>

#include <vector>

namespace memsnap::analysis::detail {

// For each allocation of a full replay (free events known): whether it is a step temporary.
// Empty when none is.
std::vector<bool> step_temporaries(const Replay& r, StackIndex& index);

// The same for the allocations live before the device's event `moment` as peak_moment finds
// them (alloc events known, free events not): their frees are looked for after `moment`, up to the first
// allocation outside a step.
std::vector<bool> step_temporaries_at(const snapshot::Snapshot& snap, int device, std::size_t moment,
                                      const std::vector<Allocation>& live, StackIndex& index);

}  // namespace memsnap::analysis::detail
