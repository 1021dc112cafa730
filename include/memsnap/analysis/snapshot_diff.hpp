#pragma once
// The snapshot diff: live blocks of two captures matched by address, size and stack, grouped
// into leak sites, ranked by growth per step, and classified. Pure data for the reports.

#include <memsnap/analysis/sites.hpp>
#include <memsnap/analysis/verdict.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memsnap::analysis {

struct SnapshotDiffOptions {
    std::optional<std::pair<std::int64_t, std::int64_t>> steps;  // (A, B), A != B
    std::optional<int> device;       // only this CUDA device
    std::vector<std::string> hide;   // extra regexes: frames to drop from stacks
    std::vector<std::string> focus;  // keep blocks whose stack has a matching frame
    bool function_granularity = false;  // frames compare by (file, function), not line
    SiteRules rules;
};

// Frames that stack normalisation always drops (allocator, unwinder, CPython, dispatcher),
// as PyTorch's own viewer does. Matched against "filename:line name".
extern const char* const default_hidden_frames;

struct FrameText {
    std::string filename;
    std::int64_t line = 0;
    std::string name;
    auto operator<=>(const FrameText&) const = default;
};

// One total across both captures: allocated, reserved, ...
struct TotalChange {
    std::int64_t before = 0;
    std::int64_t after = 0;
    std::int64_t delta = 0;
    double per_step = 0;  // delta / (B - A), or delta when steps are unknown
};

struct RepresentativeStack {
    std::int64_t size = 0;         // block size of this (stack, size) group
    std::int64_t delta_blocks = 0;
    std::int64_t delta_bytes = 0;
    std::vector<FrameText> frames;  // normalised, innermost first
};

enum class SiteVerdict { leak, shape_growth, freed, stable };
std::string_view to_string(SiteVerdict verdict);

struct Diagnosis {
    std::string pattern;   // "retained_graph", "dataset", "logging", ... ("" when none)
    std::string summary;   // "likely ...": honest wording
    std::string fix;
    std::vector<std::string> evidence;
};

struct SiteChange {
    std::size_t rank = 0;  // 1-based
    SiteKey site;
    std::int64_t before_bytes = 0, after_bytes = 0, delta_bytes = 0;
    std::int64_t before_blocks = 0, after_blocks = 0, delta_blocks = 0;
    std::int64_t new_blocks = 0, gone_blocks = 0, survivor_blocks = 0;
    double growth_bytes_per_step = 0;
    double share = 0;  // delta_bytes / total allocated growth (0 when it did not grow)
    SiteVerdict verdict = SiteVerdict::stable;
    Diagnosis diagnosis;
    std::vector<RepresentativeStack> stacks;  // the biggest changes first, at most 3
};

// Where the growth converges in the calling-context graph: the deepest frame through which
// most of the growth passes (e.g. one model.forward over many small op sites).
struct Convergence {
    FrameText frame;
    std::int64_t inclusive_bytes = 0;
    std::int64_t exclusive_bytes = 0;
    double share = 0;         // of all positive growth
    std::size_t sites = 0;    // growing sites below it
};

struct SnapshotDiff {
    std::string before_file, after_file;
    std::optional<std::pair<std::int64_t, std::int64_t>> steps;
    std::string steps_source;  // "--steps", "file names" or "unknown"
    // allocated, active, requested, reserved, inactive, inactive_split, releasable
    std::vector<std::pair<std::string, TotalChange>> totals;
    std::int64_t pending_free_before = 0, pending_free_after = 0;  // counted apart
    VerdictResult verdict;
    bool stacks_recorded = true;  // false: grouped by block size alone
    std::vector<SiteChange> sites;  // every site that has live blocks, ranked
    // Every (stack, size) group whose bytes changed, in site rank order: for flame graphs.
    std::vector<RepresentativeStack> changed_stacks;
    std::int64_t live_blocks_before = 0, live_blocks_after = 0;
    std::int64_t survivors = 0, new_blocks = 0, gone_blocks = 0;
    std::optional<Convergence> convergence;
    Diagnosis overall;  // the step-level picture for the top of the report
    std::vector<std::string> notes;

    const TotalChange& total(std::string_view name) const;
};

// Throws memsnap::Error (usage) for invalid regexes.
SnapshotDiff diff_snapshots(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                            const SnapshotDiffOptions& options);

// The message of a tripped --fail-on-growth gate, or nullopt: allocated memory or any site
// growing faster than `bytes_per_step` (per capture when steps are unknown).
std::optional<std::string> check_growth_gate(const SnapshotDiff& diff, std::int64_t bytes_per_step);

}  // namespace memsnap::analysis
