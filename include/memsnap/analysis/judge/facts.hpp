#pragma once
// Evidence as data: each fact a kind from a closed list and its named values (bytes, counts,
// fractions, names from the capture). The analysis states facts; the report layer phrases
// them (report/documents/phrases.cpp) and JSON carries both the values and the sentence.

#include <memsnap/util/range.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsnap::analysis {

enum class FactKind : std::uint16_t {
    // Totals of two captures, each against its noise floor.
    metric_change,           // metric, before, delta (ranges), threshold, change, uncertain
    metric_missing,          // metric
    non_releasable_unknown,  //
    live_blocks_change,      // before, delta (count ranges)
    new_ooms,                // delta
    new_retries,             // delta
    reserved_split,          // releasable, non_releasable (ranges): how reserved growth divides
    peak_rose,               // before, after, delta (ranges): a summary's allocated peak, past its floor
    device_verdict,          // device, verdict, allocated_before, allocated_delta, threshold: one device
                             // of several, judged on its own
    // The sites' part of a pair's verdict.
    sites_stay,          // sites, blocks, bytes, threshold, above, one_process
    sites_first_appear,  // bytes
    sites_shape,         // bytes
    // One process or not.
    traces_share_events,   // events
    traces_overlap_apart,  // events: overlap in time, share none
    trace_order_reversed,  // gap_us: the second trace ends this long before the first begins
    traces_apart,          // full: the traces share no event and do not overlap
    blocks_survive,        // blocks
    segments_survive,      // segments
    nothing_shared,        // before, after: live blocks, none at the same address
    devices_differ,        // before, after (device lists)
    roots_differ,          // before, after: project roots of different checkouts
    main_scripts_differ,   // before, after: the files the processes ran as __main__
    setting_differs,       // name, before, after
    versions_differ,       // before, after: summary layouts of torch versions that differ
    counter_falls,         // metric, before, after (ranges)
    counters_grow,         //
    no_process_evidence,   //
    // The same workload or not.
    same_sites,            // sites, share
    sites_one_side,        // side, sites, bytes, share, example
    no_stacks_to_compare,  // stacked_before, stacked_after (shares)
    one_log,               //
    workload_one_process,  // one process shown: the workload needs no showing
    summaries_no_sites,    // summary tables name no sites: the workloads cannot be compared
    // Order and points.
    order_given,      //
    steps_unknown,    // source
    too_few_points,   // points, needed
    warmup_left_out,  // intervals
    // Trend fits.
    series_fit,         // name, first, last, slope, per_step, r2, verdict
    site_steady,        // site, slope, per_step, r2, not_down
    sites_agree,        // sites
    sites_disagree,     // sites, verdict: the sites that carry the growth say another verdict
    jump_then_steady,   // at, per_step, warmup
    summary_midpoints,  //
    // Sites of a diff or a series.
    site_counts,          // delta_blocks, new, gone, before, after, delta_bytes, rate, per_step
    site_appears,         // category, and site_counts' values
    site_same_blocks,     // blocks, delta_bytes, rate, per_step
    site_fewer_blocks,    // before, after, delta_bytes, rate, per_step
    blocks_per_step,      // rate
    passes_user_code,     // frame
    forward_sites_alike,  // sites, blocks_each, blocks, bytes
    forward_sites_rate,   // blocks, bytes, per_step (per step or capture)
    converges_in,         // frame, share
    one_interval,         // first, last
    up_and_down,          // not_down
    growth_reason,        // reason: order_unknown, other_process, different_workload, unknown_process,
                          // no_stack, below_noise, allocated_unknown, small_part, shape_dominates
    site_without_stack,   // the site's blocks carry no stack: no cause can be named
    // Notes of a diff.
    not_comparable,           // same_process, same_workload: compared as levels
    caveat_same_workload,     // behaviour judged on the same sites, one process not shown
    stacks_before_recording,  // trace_stacks: live blocks made before recording started
    no_stacks_recorded,       //
    stacks_one_side,          // side ("first" or "second"), trace_stacks: its live blocks carry no stack
    stacks_some_captures,     // captures, of, files: those of a trend that record none
    focus_filter,             //
    pending_free,             // before, after
    shares_unknown,           // delta, threshold
    oom_elsewhere,            // device, events: an OOM on a device not shown
    oom_in_capture,           // side, device, events: a capture of a diff records OOMs
    // Peaks (diff, from the traces).
    peak_higher,  // side, bytes, other, delta, device, other_device
    // Out-of-memory events.
    oom_request,             // requested, device_free, allocated, reserved, cache_free
    oom_largest_free,        // largest, largest_same_stream, stream
    oom_capacity,            // capacity, other
    oom_capacity_unknown,    //
    oom_capacity_too_small,  // capacity, held: --device-memory below this process's reserved + the free
    oom_larger_than_held,    // held
    oom_levels_impossible,   // allocated, reserved: counted back below 0 (the trace does not match its snapshot)
    oom_leak_site,           // site, allocations, bytes, held, held_allocations
    ooms_more,               // total, explained
    // Trace.
    frees_unseen,                 // frees
    entries_full,                 // entries: the trace holds max_entries
    lost_history,                 // blocks, bytes
    trace_not_recorded,           //
    recording_started_late,       // frees
    recording_started_late_live,  // blocks: live, made before the first entry, without a stack
    start_unseen,                 // frees: of blocks made before the trace's first entry, cause unknown
    replay_disagrees,             // what, replayed, snapshot
    live_not_in_snapshot,         // allocations the trace leaves live that the snapshot does not hold
    negative_start,               // counted back from the snapshot, memory before the trace is negative
    twice_allocated,              // addresses
    larger_blocks,                // allocations, bytes: live at the end in blocks larger than asked for
    iterations_none,              // why: none, repeats_not_loop (repeats), too_few (iterations)
    iterations_many,              // iterations, listed
    truncated_warmup,             //
    block_history_only,           // torch <= 2.0: a history per block, no trace events
    // Ranks and series.
    ranks_from_order,    //
    ranks_within_noise,  // noise
    roots_several,       // roots, list
    devices_as_ranks,    // devices
    devices_hold_parts,  // devices: the devices hold different parts of a model
    step_differs,        // steps
    device_per_rank,     // file, devices: a rank's capture holds several devices
    rank_ooms,           // rank, ooms, device (or -1): a rank's capture holds out-of-memory events
    same_capture,        // file: a snapshot diffed with itself
    // Summary and stats tables.
    one_table,          // one table for the device: before and after are the same table
    series_listed,      // tables, listed
    metrics_one_sided,  // before_only, after_only
    metrics_missing,    // list
    devices_paired,     // before, after: the only device on each side
    device_one_side,    // device, side
    // Gates.
    gate_growth,      // what, rate, per_step, limit, unit
    gate_not_judged,  // why: order_unknown, other_process, different_workload, unknown_process,
                      // too_few_iterations
    // Input.
    file_skipped,    // file, reason
    reader_warning,  // file, text
};

std::string_view to_string(FactKind kind);

struct FactValue {
    enum class Unit : std::uint8_t { bytes, count, real, text, flag, bytes_range, count_range } unit = Unit::count;
    std::int64_t integer = 0;  // bytes, count, flag; a range's low end
    std::int64_t high = 0;     // a range's high end
    double real = 0;
    std::string text;
};

struct Fact {
    FactKind kind{};
    std::vector<std::pair<std::string_view, FactValue>> values;

    explicit Fact(FactKind k) : kind(k) {}
    Fact& bytes(std::string_view name, std::int64_t v);
    Fact& count(std::string_view name, std::int64_t v);
    Fact& real(std::string_view name, double v);
    Fact& text(std::string_view name, std::string v);
    Fact& flag(std::string_view name, bool v);
    // A range of bytes or of a count (a memory_summary cell is truncated to its unit).
    Fact& range(std::string_view name, ByteRange r, bool bytes);

    // A value by name; 0, 0.0, "" or false when the fact has none of that name.
    std::int64_t integer(std::string_view name) const;
    double fraction(std::string_view name) const;
    const std::string& word(std::string_view name) const;
    bool is(std::string_view name) const { return integer(name) != 0; }
    bool has(std::string_view name) const;
    const FactValue* find(std::string_view name) const;
};

using Facts = std::vector<Fact>;

}  // namespace memsnap::analysis
