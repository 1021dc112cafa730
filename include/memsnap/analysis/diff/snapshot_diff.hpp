#pragma once
// The snapshot diff, in stages (each a pure function with its own file and tests):
//   match_blocks  live blocks of both captures: survivors, new, gone    (match_blocks.hpp)
//   group_sites   (stack, size) groups under their site                  (group_sites.hpp)
//   explain       verdicts, diagnoses, convergence, notes                 (explain.hpp)
//   rank          leaks first, then by growth per step; representative stacks (rank.hpp)
// then the listed sites are selected (--top, --min-growth).

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/snapshot/model.hpp>

namespace memsnap::analysis {

// Throws Error: usage for invalid patterns; input when options.device is not in a capture.
SnapshotDiff diff_snapshots(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                            const AnalysisOptions& options);

// Every stack of a diff made with AnalysisOptions::stack_samples, before and after.
StackProfile diff_stacks(const SnapshotDiff& diff);
// The same, its samples moved out of `diff` (left without them): one copy fewer of what may
// be a sample per site. The frame table is copied, the report's stacks use it too.
StackProfile take_diff_stacks(SnapshotDiff& diff);

}  // namespace memsnap::analysis
