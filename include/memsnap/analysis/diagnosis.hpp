#pragma once
// Turns the shape of the growth into the likely cause and its fix (docs/leak-patterns.md).
// Snapshots record where memory was allocated, not who keeps it alive, so every diagnosis is
// worded as "likely" and carries the evidence it used.

#include <memsnap/analysis/snapshot_diff.hpp>

#include <vector>

namespace memsnap::analysis {

// Diagnoses one site from its numbers and the frames of its growing stacks.
Diagnosis diagnose_site(const SiteChange& site, const std::vector<FrameText>& growth_frames,
                        const std::optional<std::pair<std::int64_t, std::int64_t>>& steps);

// True when a stack passes through a module's forward pass.
bool is_forward_frame(const FrameText& frame);

// The step-level picture: the allocator verdict, a retained autograd graph when many forward
// sites grow alike, otherwise the leading site. Sets site diagnoses of a retained graph too.
Diagnosis diagnose_overall(SnapshotDiff& diff,
                           const std::vector<std::vector<FrameText>>& growth_frames_by_site);

}  // namespace memsnap::analysis
