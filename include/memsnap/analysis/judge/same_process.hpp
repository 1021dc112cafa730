#pragma once
// Can two captures come from one process? Only then can a block be followed from one to the
// other. Evidence, strongest first:
//   against: devices that differ; user code under another project root (a renamed checkout,
//            another machine); allocator settings that differ; traces that overlap in time
//            without sharing an event; live blocks on both sides but none, and no segment, at
//            the same address.
//   for:     the same trace events in both (the ring buffer of one process); live blocks at
//            the same address with the same size and stack.
// Anything against wins; without evidence either way the answer is unknown.

#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis {

// Whether the two captures can come from one process: only then can a block be followed from
// one to the other, and only then can new blocks that stay be called a leak.
struct SameProcess {
    std::optional<bool> value;          // nullopt: the captures do not say
    std::vector<std::string> evidence;  // the facts that decided, with numbers
};

struct DeviceSets {
    std::vector<int> before, after;  // devices holding segments (or tables)
    bool differ() const { return before != after; }
};

// How two traces overlap in time: the events both cover (the fewer side's count) and those
// both hold. Needs only the captures, so it can run while the blocks are matched.
struct TraceOverlap {
    std::size_t overlapping = 0, shared = 0;
    bool in_halves = false;  // counted by two threads, each over half the time (long traces)
    // Both traces' events (of the device) that have a stack, when the walk read every event
    // (traces in time order); nullopt otherwise.
    std::optional<std::size_t> with_stack;
};
TraceOverlap compare_traces(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                            std::optional<int> device);

// Live blocks of both captures, and those at the same address with the same size and stack.
struct BlockCounts {
    std::int64_t live_before = 0, live_after = 0, survivors = 0;
};

SameProcess check_same_process(const snapshot::Snapshot& before, const snapshot::Snapshot& after,
                               const BlockCounts& match, const StackIndex& index, const DeviceSets& devices,
                               std::optional<int> device, const TraceOverlap& trace);

}  // namespace memsnap::analysis
