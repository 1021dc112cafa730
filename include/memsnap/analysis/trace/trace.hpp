#pragma once
// `memsnap trace`: one capture's trace (the allocator's ring buffer of events) replayed
// against its snapshot. The timeline of allocated and reserved bytes, the peak and what made
// it up, the iterations, the allocations each iteration leaves behind, and every
// out-of-memory event explained with the numbers of its moment, not of the end state.

#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/moments.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/snapshot/model.hpp>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// Bounds on what one capture can make memsnap hold, whatever the file says.
inline constexpr std::size_t kMaxOomsExplained = limits::ooms_explained;
inline constexpr std::size_t kMaxTraceSitesListed = limits::trace_sites;
inline constexpr std::size_t kMaxIterationsListed = limits::iterations_listed;
inline constexpr std::size_t kMaxTimelinePoints = limits::timeline_points;
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
    // device_full, fragmentation_oom, other_process or single_huge_request.
    Pattern classification = Pattern::device_full;
    Facts evidence;
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
    // With three whole iterations or more: leak (the same number every complete iteration,
    // after the first), one_time_growth (made in some iterations, not steadily), warmup (all
    // from before the first iteration), current (none from a complete iteration, some from the
    // unfinished last one: its own tensors). Otherwise live.
    Verdict verdict = Verdict::live;
    std::vector<RepresentativeStack> stacks;  // frames in TraceResult::frame_table
    StacksNotShown stacks_not_shown;          // the site's other stacks
};

struct TimelinePoint {
    std::size_t event = 0;      // bytes before the device's event at this position (the end: after the last)
    std::int64_t time_us = -1;  // when they began: the time of the event before (of event 0 for the first)
    std::int64_t allocated = 0, reserved = 0;
};

// Where the iterations come from (TraceResult::iteration_source).
enum class IterationSource : std::uint8_t { none, profiler_step, optimizer_step, user_steps, loop };
// "none", "annotations: ProfilerStep", "annotations: Optimizer.step", "annotations: user steps",
// "repeating allocations".
std::string_view to_string(IterationSource source);

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
    // The trace holds alloc events (else only a state was recorded: nothing to replay).
    bool recorded = true;
    // The ring buffer lost events: live blocks that carry a stack have no alloc event, frees
    // with a stack of blocks never seen allocated, or max_entries reached.
    bool truncated = false;
    // Recording started after some blocks were made: their frees, without a stack, come first.
    bool started_late = false;
    // The trace frees blocks made before its first entry, and whether recording started late or
    // the ring buffer dropped older entries cannot be told (frees carry their own stack).
    bool start_unseen = false;
    // Live at the end and made before the trace's first entry (no alloc event): what the trace
    // cannot say when or where it was made.
    std::int64_t live_before_trace_blocks = 0, live_before_trace_bytes = 0;
    std::int64_t live_before_trace_with_stack = 0;  // of those blocks, the ones whose stack says where
    Facts truncation_evidence;
    // Where the replayed end state and the snapshot disagree (empty: they agree).
    Facts disagreements;
    std::size_t iterations = 0;
    IterationSource iteration_source = IterationSource::none;
    bool iterations_judged = false;             // three whole iterations or more
    std::vector<std::size_t> iteration_starts;  // event positions
    // `snapshot` events: where a snapshot was taken while recording (the file's own is the end).
    std::vector<std::size_t> snapshot_events;
    // The recorded times of those positions (-1 where not recorded), for writers on a clock.
    std::vector<std::int64_t> iteration_start_times_us, snapshot_times_us;
    Peak peak;
    std::vector<OomExplanation> ooms;  // the first kMaxOomsExplained
    std::size_t ooms_total = 0;
    std::vector<TraceSite> sites;  // still live at the end, leaks first, then by bytes
    std::size_t sites_total = 0;
    std::int64_t sites_not_listed_bytes = 0, sites_not_listed_allocations = 0;  // past those listed
    std::vector<TimelinePoint> timeline;               // at most 1000 points, the peak and the OOMs included
    std::vector<std::int64_t> allocated_by_iteration;  // the most allocated in each iteration
    std::vector<FrameText> frame_table;
    Facts headline;  // for the first lines: OOMs on another device
    Facts notes;
    std::optional<StackProfile> stacks;  // with TraceOptions::stacks
};

struct TraceOptions {
    std::optional<std::int64_t> device_memory;  // --device-memory: the GPU's capacity
    // Pictures: the stacks live at the peak or at the end, from the same replay.
    enum class Stacks { none, peak, end } stacks = Stacks::none;
};

// The device a trace shows unless --device says: the one with an OOM, else the one that holds
// the snapshot's segments (the most reserved), else the one with the most trace events.
// Throws Error (input) when the capture has neither segments nor trace events.
int default_trace_device(const snapshot::Snapshot& snap);

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

// The peak of allocated memory of a capture's trace (of options.device, else the default
// device) and what held it; none without trace events.
std::optional<Peak> trace_peak(const snapshot::Snapshot& snap, const AnalysisOptions& options);

// The out-of-memory events of a capture, by device.
std::map<int, std::int64_t> ooms_by_device(const snapshot::Snapshot& snap);

// The allocations of a trace live at its peak (or at the end), by stack.
StackProfile trace_stacks(const snapshot::Snapshot& snap, const AnalysisOptions& options, bool at_peak);

}  // namespace memsnap::analysis
