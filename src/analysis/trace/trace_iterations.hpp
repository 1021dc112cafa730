#pragma once
// Internal to `trace`: where iterations (training steps) begin. Only real steps count:
//   - the STARTs of step annotations in external_annotations: torch.profiler's ProfilerStep#N,
//     Optimizer.step#..., or a user record_function whose name carries a step number
//     ("train_step 12", "iter#3"). Compiler phases (dynamo_timed) and Optimizer.zero_grad alone
//     are not steps; the END of the last step closes it.
//   - else a repetition of allocations (stack and size) whose periods each run through the
//     whole body of one user function called in a loop at the outermost user frames, and
//     cover most of the trace. The layers of one forward pass, a per-parameter loop inside one
//     optimizer step and kernel autotuning repeat too, but deeper: they are not steps.
// Per-iteration verdicts need three whole iterations or more.

#include "trace_replay.hpp"

#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/trace/trace.hpp>

#include <optional>
#include <vector>

namespace memsnap::analysis::detail {

struct Iterations {
    std::vector<std::size_t> starts;  // event positions, increasing; iteration k is [starts[k], starts[k+1])
    IterationSource source = IterationSource::none;
    std::optional<Fact> note;  // why none were found, or why they are too few to judge by
    std::size_t complete() const { return starts.size() < 2 ? 0 : starts.size() - 1; }
    // Per-iteration verdicts need three whole iterations or more.
    bool judged() const { return complete() >= 3; }
    // The iteration holding event `position`: -1 before the first, complete() for the part after
    // the last boundary.
    long index_of(std::size_t position) const;
};

Iterations find_iterations(const snapshot::Snapshot& snap, const Replay& r, int device, StackIndex& index);

}  // namespace memsnap::analysis::detail
