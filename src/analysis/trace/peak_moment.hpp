#pragma once
// Internal to `trace`: the moment one device's allocated bytes peak and what is live then,
// found without the per-allocation and per-event arrays a full replay keeps. A diff asks this
// of both its sides, and on a long trace those arrays are tens of MB of fresh pages each.

#include "trace_replay.hpp"

#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace memsnap::analysis::detail {

struct PeakMoment {
    std::size_t at = 0;          // before the device's event `at`; its number of events: the end
    std::int64_t allocated = 0;  // bytes allocated then
    std::int64_t time_us = 0;    // of the event that reached it (`at` - 1); at 0, of the first event
    // Live then, in the order a full replay makes them. When each is freed is not looked for:
    // free_event is empty.
    std::vector<Allocation> live;
    // Of those, the allocations the trace leaves live that the snapshot does not hold (no active
    // block at the address, or a smaller one): the trace lacks their frees (recording paused and
    // resumed, say), so they may have been freed before the moment. Their bytes as allocated.
    std::size_t not_in_snapshot = 0;
    std::int64_t not_in_snapshot_bytes = 0;
};

// The first moment of the device's highest allocated bytes as replay() counts them (the same
// moment, bytes and live allocations), or none when the device has no events or its trace
// records no allocs. One pass over the events, holding the allocations live at once and the
// highest moment of every 256 events; the few stretches that the end's larger blocks fall in
// are walked again (and for a trace of several devices, its devices are read once more to
// number the events).
std::optional<PeakMoment> peak_moment(const snapshot::Snapshot& snap, int device);

// What the forward pass sizes its index of live allocations for: the most allocations the
// device's trace holds live at once if every free_completed pairs with an alloc it made, read
// from the actions alone. Frees of blocks made before the trace make it fewer (the index grows
// then). Allocs whose frees the trace lacks make it more (lost frees, free_completed left out
// by skip_actions, a crafted run of allocs at one address): at most a quarter of the trace's
// events (of every device) and kMostExpectedLive, so that such a trace costs at most 32 MiB of
// index it does not use, where growing from 1,024 slots cost a copy of every slot at each
// doubling.
inline constexpr std::size_t kMostExpectedLive = std::size_t{1} << 20;
std::size_t expected_live(const snapshot::TraceEvents& trace, int device);

// The same from a full replay: what a capture whose sums come near the 64-bit limits gets, so
// that it is refused where and as replay() refuses it; and what the tests compare with.
std::optional<PeakMoment> peak_moment_by_replay(const snapshot::Snapshot& snap, int device);

}  // namespace memsnap::analysis::detail
