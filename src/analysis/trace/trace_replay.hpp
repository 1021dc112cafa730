#pragma once
// Internal to `trace`: one device's trace replayed forward against the snapshot taken at its
// end. Every allocation the trace or the snapshot knows gets its alloc and free positions,
// and allocated and reserved bytes are known before each event (counted back from the
// snapshot's totals, so a truncated ring buffer still gives absolute values).

#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/snapshot/model.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::analysis::detail {

// A position among one device's events, or none: 4 bytes where std::optional<std::size_t>
// takes 16, for the millions of allocations of a long trace (a replay refuses a device with
// 2^32 - 1 events or more).
class EventIndex {
  public:
    constexpr EventIndex() = default;
    constexpr EventIndex(std::nullopt_t) {}  // converts as std::optional does
    constexpr EventIndex(std::size_t position) : plus_one_(static_cast<std::uint32_t>(position + 1)) {}
    constexpr bool has_value() const { return plus_one_ != 0; }
    constexpr explicit operator bool() const { return has_value(); }
    constexpr std::size_t operator*() const { return plus_one_ - 1; }

  private:
    std::uint32_t plus_one_ = 0;
};

struct Allocation {
    std::int64_t address = 0, size = 0;
    snapshot::StackId stack;
    EventIndex alloc_event;                   // none: made before the trace begins
    EventIndex free_event;                    // none: live at the end
    snapshot::StackId freed_by;               // made before the trace: the stack its free carries
    std::int64_t requested = 0;               // the bytes asked for; 0: as `size`
    bool live_at(std::size_t moment) const {  // before event `moment`
        return (!alloc_event || *alloc_event < moment) && (!free_event || *free_event >= moment);
    }
    // What a category is judged by, as a snapshot's block is judged by its requested size.
    std::int64_t asked() const { return requested != 0 ? requested : size; }
};

// A reserved address range: a segment, or a mapped part of an expandable one.
struct ReservedRange {
    std::int64_t address = 0, size = 0;
    std::int64_t stream = 0;
};

// One device's events, oldest first: positions in the snapshot's trace (which must stay
// where it is while they are read).
class DeviceEvents {
  public:
    explicit DeviceEvents(const snapshot::TraceEvents& all) : all_(&all) {}
    // Every event of the trace, held as no positions at all: most captures are of one device.
    void take_all() {
        every_ = true;
        at_ = {};
    }
    void reserve(std::size_t count) { at_.reserve(count); }
    void push_back(std::size_t position) { at_.push_back(position); }
    std::size_t size() const { return every_ ? all_->size() : at_.size(); }
    bool empty() const { return size() == 0; }
    snapshot::TraceEvent operator[](std::size_t i) const { return (*all_)[position(i)]; }
    snapshot::TraceEvent front() const { return (*this)[0]; }
    snapshot::TraceEvent back() const { return (*this)[size() - 1]; }
    // When the state before event `moment` began: the time of the event before it (the first
    // event's for moment 0). Not for empty events.
    std::int64_t time_before(std::size_t moment) const { return (*this)[moment > 0 ? moment - 1 : 0].time_us; }
    // The first event at or after `time_us`, for events in time order.
    std::size_t first_at(std::int64_t time_us) const {
        if (every_) {
            const auto it =
                std::ranges::partition_point(*all_, [&](const snapshot::TraceEvent& e) { return e.time_us < time_us; });
            return static_cast<std::size_t>(it - all_->begin());
        }
        const auto it = std::ranges::partition_point(at_, [&](std::size_t p) { return (*all_)[p].time_us < time_us; });
        return static_cast<std::size_t>(it - at_.begin());
    }

  private:
    std::size_t position(std::size_t i) const { return every_ ? i : at_[i]; }
    const snapshot::TraceEvents* all_;
    std::vector<std::size_t> at_;
    bool every_ = false;
};

// One device's events of a trace.
DeviceEvents events_of(const snapshot::Snapshot& snap, int device);

struct Replay {
    explicit Replay(const snapshot::Snapshot& snap) : events(snap.events) {}
    DeviceEvents events;
    // Before event i; index events.size() is the end (the snapshot's own totals). `reserved`
    // is empty when the replay counted allocated bytes only.
    std::vector<std::int64_t> allocated, reserved;
    std::vector<Allocation> allocations;
    std::int64_t frees_unseen = 0;  // frees of blocks allocated before the trace
    // Traced allocations live at the end whose block is larger than their request rounded up
    // (the allocator did not split it), and by how much in all.
    std::int64_t larger_blocks = 0, larger_by_bytes = 0;
    // Allocations (indices) the trace leaves live that the snapshot does not hold: no active
    // block at the address, or a smaller one. Their frees are missing from the trace.
    std::vector<std::size_t> not_in_snapshot;
    bool recorded = true;       // the trace holds alloc events
    bool truncated = false;     // the ring buffer lost events
    bool started_late = false;  // recording started after some blocks were made
    bool start_unseen = false;  // blocks freed were made before the first entry: which of the two, unknown
    Facts truncation_evidence;
    Facts disagreements;
};

// Trace entries give the size the caller asked for; the block it got is rounded up to 512
// bytes (torch's round_size), or is the snapshot's block when that is still live. Inline: the
// peak pass asks it of every alloc of a long trace.
inline std::int64_t block_size(std::int64_t requested) {
    constexpr std::int64_t kMinBlock = 512;
    if (requested <= kMinBlock) return kMinBlock;
    if (requested > std::numeric_limits<std::int64_t>::max() - (kMinBlock - 1)) return requested;
    return (requested + (kMinBlock - 1)) & ~(kMinBlock - 1);  // positive: rounds up as / and * would
}

// What a replay counts before each event: a peak needs allocated bytes only.
enum class Counted { allocated_and_reserved, allocated };

Replay replay(const snapshot::Snapshot& snap, int device, Counted counted = Counted::allocated_and_reserved);

// The reserved ranges at moments walked back from the end: the snapshot's segments, then each
// event undone from the last one down.
class ReservedSweep {
  public:
    ReservedSweep(const snapshot::Snapshot& snap, int device);
    void undo(const snapshot::TraceEvent& e, std::int64_t stream);
    std::vector<ReservedRange> ranges() const;  // by address

  private:
    std::string file_;
    std::map<std::int64_t, ReservedRange> ranges_;
};

// The reserved ranges just before event `moment`: the snapshot's segments with the segment
// events from `moment` on undone.
std::vector<ReservedRange> reserved_at(const snapshot::Snapshot& snap, const Replay& r, int device, std::size_t moment);

}  // namespace memsnap::analysis::detail
