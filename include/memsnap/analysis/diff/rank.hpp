#pragma once
// Stage 4 of the snapshot diff: sites in the order a reader needs them: leak sites first, then
// by growth per step, then bytes after, then name (so the order never depends on anything but
// the data); numbered, with their verdicts, diagnoses and representative stacks; and every
// grown stack for flame graphs. Only the sites that --top and --min-growth
// list are built out in full, so that a capture of a million sites costs little more than
// its counts.

#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <map>
#include <optional>
#include <vector>

namespace memsnap::analysis {

struct SiteSelection {
    std::size_t top = 0;                              // 0: all
    std::int64_t min_growth = 0;                      // bytes of change, either way
    StackSamples stack_samples = StackSamples::none;  // each stack's before and after, for pictures
};

struct RankedSites {
    std::vector<SiteChange> sites;  // the listed ones, ranked, with verdict, diagnosis and share
    std::size_t total = 0, beyond_top = 0, below_min_growth = 0;
    std::int64_t not_listed_delta_bytes = 0;   // of the sites left out, so that deltas add up
    std::optional<SiteChange> fastest;         // the fastest-growing site of all, listed or not
    std::vector<ProfileSample> stack_samples;  // with SiteSelection::stack_samples
    std::vector<FrameText> frame_table;        // the frames of every stack
};

// `judged` is parallel to `sites` (explain's output).
RankedSites rank_sites(std::vector<SiteGroups> sites, const std::vector<SiteJudgement>& judged,
                       const SiteDiagnoser& diagnose, const StackIndex& index, bool stacks_recorded,
                       const SiteSelection& selection = {});

}  // namespace memsnap::analysis
