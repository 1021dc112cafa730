#pragma once
// Do two captures' traces share events? The one proof that they come from one process: an
// event's time is wall-clock time, so no other run records the same (time, address, size,
// action). Walks both traces where they lie, in two halves at once when they are long.

#include <memsnap/snapshot/model.hpp>

#include <cstddef>
#include <optional>

namespace memsnap::analysis {

// How two traces overlap in time: the events both cover (the fewer side's count) and those
// both hold. Needs only the captures, so it can run while the blocks are matched.
struct TraceOverlap {
    std::size_t overlapping = 0, shared = 0;
    bool in_halves = false;  // counted by two threads, each over half the time (long traces)
    // Both traces' events (of the device) that have a stack, when the walk read every event
    // (traces in time order); nullopt otherwise.
    std::optional<std::size_t> with_stack;
    // The traces' windows (timed events of the device), when they have timed events.
    std::optional<std::int64_t> before_first, before_last, after_first, after_last;
};
TraceOverlap compare_traces(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                            std::optional<int> device);

}  // namespace memsnap::analysis
