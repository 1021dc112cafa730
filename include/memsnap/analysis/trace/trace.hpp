#pragma once
// `memsnap trace`: one capture's trace (the allocator's ring buffer of events) replayed
// against its snapshot. The timeline of allocated and reserved bytes, the peak and what made
// it up, the iterations, the allocations each iteration leaves behind, and every
// out-of-memory event explained with the numbers of its moment, not of the end state.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/snapshot/model.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// Bounds on what one capture can make memsnap hold, whatever the file says.
inline constexpr std::size_t kMaxOomsExplained = 20;       // the rest are counted
inline constexpr std::size_t kMaxTraceSitesListed = 1000;  // with --top 0
inline constexpr std::size_t kMaxIterationsListed = 1000;  // per site
inline constexpr std::size_t kMaxTimelinePoints = 1000;
// Memory held at one moment by one site (or one category, in `categories`).
struct LiveSite {
    std::size_t rank = 0;
    SiteKey site;
    Category category = Category::unknown;
    std::int64_t bytes = 0;
    std::int64_t allocations = 0;
};

struct MomentUsage {
    std::vector<LiveSite> sites;  // by bytes, at most options.top (0: all)
    std::array<std::int64_t, category_count> category_bytes{};
};

// One out-of-memory event, with the allocator's state replayed to its moment.
struct OomExplanation {
    int device = 0;
    std::int64_t time_us = -1;
    std::size_t event = 0;  // position in the device's trace
    std::int64_t requested_bytes = 0;
    std::int64_t device_free_bytes = 0;  // what CUDA reported free
    std::int64_t allocated_bytes = 0, reserved_bytes = 0;
    std::int64_t stream = 0;
    std::int64_t largest_free_block_bytes = 0;  // in the cache, any stream
    std::int64_t largest_free_block_same_stream_bytes = 0;
    std::optional<std::int64_t> device_memory_bytes;  // --device-memory, when given
    std::optional<FrameText> frame;                   // the user frame of the failing allocation
    RepresentativeStack stack;                        // frames in TraceResult::frame_table
    // device_full, fragmentation, other_process or single_huge_request.
    std::string classification;
    std::vector<std::string> evidence;
    std::vector<std::string> advice;
    MomentUsage usage;  // what was live at that moment
};

// A site's counts of what is live at the end.
struct TraceCounts {
    std::int64_t live_allocations = 0, live_bytes = 0;
    std::int64_t warmup_allocations = 0;   // made before the first iteration (or the trace)
    std::int64_t current_allocations = 0;  // made in the last, unfinished iteration
    std::int64_t leak_allocations_per_iteration = 0, leak_bytes_per_iteration = 0;
};

// The allocations of one site that are still live at the end of the trace.
struct TraceSite : TraceCounts {
    std::size_t rank = 0;
    SiteKey site;
    Category category = Category::unknown;
    // Of these, how many each iteration made (index 0: the first iteration); empty without
    // iterations. Allocations made before the first iteration, or before the trace, are warmup.
    // At most the last kMaxIterationsListed iterations, from per_iteration_first on; the
    // verdict weighs them all.
    std::vector<std::int64_t> per_iteration;
    std::size_t per_iteration_first = 0;
    // leak (the same number every complete iteration, after the first when there are three
    // or more), one_time (made in some iterations, not steadily), warmup (all from before the
    // first iteration), current (none from a complete iteration, some from the unfinished
    // last one: its own tensors), or live (no iterations to judge by).
    std::string verdict;
    std::vector<RepresentativeStack> stacks;  // frames in TraceResult::frame_table
};

struct TimelinePoint {
    std::size_t event = 0;  // position in the device's trace; the first point is before it
    std::int64_t time_us = -1;
    std::int64_t allocated = 0, reserved = 0;
};

struct TraceResult {
    std::string file;
    std::string generation;
    int device = 0;
    std::vector<int> devices;  // that have a trace
    // "ring buffer" (device_traces, torch 2.0+) or "block history" (torch <= 2.0 captures
    // with only a history per block: no order in time, so no timeline, peak or iterations).
    std::string source = "ring buffer";
    bool ordered() const { return source == "ring buffer"; }
    std::size_t events = 0;  // of this device (block history: the recorded allocations)
    std::int64_t time_first_us = -1, time_last_us = -1;
    // The ring buffer was full or had dropped entries: frees of blocks the trace never saw
    // allocated, or max_entries reached. Then the start is not the start of the process.
    bool truncated = false;
    std::vector<std::string> truncation_evidence;
    // Where the replayed end state and the snapshot disagree (empty: they agree).
    std::vector<std::string> disagreements;
    std::size_t iterations = 0;
    std::string iteration_source;               // "annotations: ProfilerStep", "annotations: Optimizer.step",
                                                // "repeating allocations", "none"
    std::vector<std::size_t> iteration_starts;  // event positions
    // `snapshot` events: where a snapshot was taken while recording (the file's own is the end).
    std::vector<std::size_t> snapshot_events;
    struct Peak {
        std::int64_t bytes = 0;
        std::int64_t time_us = -1;
        std::size_t event = 0;
        MomentUsage usage;
    } peak;
    std::vector<OomExplanation> ooms;  // the first kMaxOomsExplained
    std::size_t ooms_total = 0;
    std::vector<TraceSite> sites;  // still live at the end, leaks first, then by bytes
    std::size_t sites_total = 0;
    std::vector<TimelinePoint> timeline;               // at most 1000 points, the peak and the OOMs included
    std::vector<std::int64_t> allocated_by_iteration;  // the most allocated in each iteration
    std::vector<FrameText> frame_table;
    std::vector<std::string> notes;
    std::optional<StackProfile> stacks;  // with TraceOptions::stacks
};

struct TraceOptions {
    std::optional<std::int64_t> device_memory;  // --device-memory: the GPU's capacity
    // Pictures: the stacks live at the peak or at the end, from the same replay.
    enum class Stacks { none, peak, end } stacks = Stacks::none;
};

// Throws Error: input when the capture holds no trace for the device, or the device is not
// in the capture; usage for invalid site rules.
TraceResult analyze_trace(const snapshot::Snapshot& snap, const AnalysisOptions& options,
                          const TraceOptions& trace_options = {});

// The OOM events of a capture, explained (for `info`): none when it has none or no trace.
struct OomReport {
    std::vector<OomExplanation> ooms;  // the first kMaxOomsExplained
    std::size_t ooms_total = 0;
    std::vector<FrameText> frame_table;  // the frames of their stacks
};
OomReport explain_ooms(const snapshot::Snapshot& snap, const AnalysisOptions& options,
                       const TraceOptions& trace_options = {});

// The allocations of a trace live at its peak (or at the end), by stack.
StackProfile trace_stacks(const snapshot::Snapshot& snap, const AnalysisOptions& options, bool at_peak);

}  // namespace memsnap::analysis
