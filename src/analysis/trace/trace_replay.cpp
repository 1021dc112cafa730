#include "trace_replay.hpp"

#include <memsnap/util/checked.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/id_index.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>

namespace memsnap::analysis::detail {

using snapshot::Snapshot;
using snapshot::TraceAction;

namespace {

std::int64_t reserved_change(const snapshot::TraceEvent& e, const std::string& file) {
    switch (e.action()) {
        case TraceAction::segment_alloc:
        case TraceAction::segment_map:
            return e.size;
        case TraceAction::segment_free:
        case TraceAction::segment_unmap:
            return util::or_refuse(util::checked_neg(e.size), "a trace segment event's size", file);
        default:
            return 0;
    }
}

std::optional<std::int64_t> max_entries(const Snapshot& snap) {
    for (const auto& [key, value] : snap.allocator_settings)
        if (key == "trace_alloc_max_entries") {
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
            if (ec == std::errc() && ptr == value.data() + value.size()) return v;
        }
    return std::nullopt;
}

struct ForwardCounts {
    std::int64_t double_allocs = 0, allocs = 0;
    std::int64_t allocs_with_stack = 0;
    std::int64_t unseen_with_stack = 0;  // frees of blocks the trace never saw allocated, with a stack
    // Frees paired with their alloc whose stack is the alloc's, or another (the free's own).
    std::int64_t frees_with_alloc_stack = 0, frees_with_own_stack = 0;
};

// Whether the ring buffer lost events, or recording started late (23.9): live blocks that carry
// a stack were made with history on, so a trace without their alloc lost it. A free carries the
// stack of its block's alloc, unless history records every action's own (context="all", the
// default): then the free of an unseen block carries a stack whenever it was made, so it is
// evidence of loss only where the trace's paired frees all carry their alloc's stack.
// Live blocks without a stack or an alloc event were made before recording, where every traced
// alloc carries a stack: recording started late, whether or not the trace frees any such block.
void judge_truncation(Replay& r, const Snapshot& snap, const ForwardCounts& c, std::int64_t lost,
                      std::int64_t lost_bytes, std::int64_t made_unrecorded) {
    const auto allocs = c.allocs;
    const bool frees_show_alloc_stack = c.frees_with_own_stack == 0 && c.frees_with_alloc_stack > 0;
    const auto unseen_with_stack = frees_show_alloc_stack ? c.unseen_with_stack : 0;
    r.recorded = allocs > 0;
    if (!r.recorded) {
        if (!r.events.empty()) r.truncation_evidence.push_back(Fact(FactKind::trace_not_recorded));
        return;
    }
    if (lost > 0)
        r.truncation_evidence.push_back(Fact(FactKind::lost_history).count("blocks", lost).bytes("bytes", lost_bytes));
    if (unseen_with_stack > 0)
        r.truncation_evidence.push_back(Fact(FactKind::frees_unseen).count("frees", unseen_with_stack));
    const auto n = static_cast<std::int64_t>(r.events.size());
    const bool full = [&] {
        const auto limit = max_entries(snap);
        return limit && *limit > 0 && n >= *limit;
    }();
    if (full) r.truncation_evidence.push_back(Fact(FactKind::entries_full).count("entries", n));
    r.truncated = lost > 0 || unseen_with_stack > 0 || full;
    if (r.truncated) return;
    if (r.frees_unseen == 0) {
        if (made_unrecorded > 0 && c.allocs_with_stack == allocs) {
            r.started_late = true;
            r.truncation_evidence.push_back(
                Fact(FactKind::recording_started_late_live).count("blocks", made_unrecorded));
        }
        return;
    }
    // Frees that carry their own stack say nothing of when their blocks were made.
    if (c.unseen_with_stack > 0 && !frees_show_alloc_stack) {
        r.start_unseen = true;
        r.truncation_evidence.push_back(Fact(FactKind::start_unseen).count("frees", r.frees_unseen));
        return;
    }
    r.started_late = true;
    r.truncation_evidence.push_back(Fact(FactKind::recording_started_late).count("frees", r.frees_unseen));
}

// The allocations live at a moment of the forward pass, by address: an open-addressing index
// into the replay's allocations, as a node per entry would cost an allocation and a free per
// trace event. An event's address is hashed once (`key`) for all it asks of the index.
class LiveAllocations {
    const std::vector<Allocation>& allocations_;
    std::uint64_t seed_;
    util::IdIndex index_;

    auto at(std::int64_t address) const {
        return [this, address](std::uint32_t id) { return allocations_[id].address == address; };
    }
    static std::optional<std::size_t> widen(std::optional<std::uint32_t> id) {
        return id ? std::optional<std::size_t>(*id) : std::nullopt;
    }

  public:
    struct Key {
        std::int64_t address;
        std::uint64_t hash;
    };
    explicit LiveAllocations(const std::vector<Allocation>& allocations)
        : allocations_(allocations), seed_(util::hash_seed()) {}
    Key key(std::int64_t address) const {
        return {address, util::mix_hash(seed_, static_cast<std::uint64_t>(address))};
    }
    std::optional<std::size_t> find(std::int64_t address) const {
        return widen(index_.find(key(address).hash, at(address)));
    }
    // Files an allocation at `k`, which must be its address and not live.
    void insert(Key k, std::size_t allocation) { index_.insert(k.hash, static_cast<std::uint32_t>(allocation)); }
    // The allocation live at `k`, no longer live.
    std::optional<std::size_t> take(Key k) { return widen(index_.erase(k.hash, at(k.address))); }
    template <class Fn>
    void for_each(Fn&& fn) const {
        index_.for_each([&](std::uint32_t id) { fn(std::size_t{id}); });
    }
};

// Forward: pairs each alloc with the free that completes it, by address; `live` ends with the
// allocations still live.
ForwardCounts pair_allocations(Replay& r, LiveAllocations& live) {
    ForwardCounts c;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        const auto e = r.events[i];
        if (e.action() == TraceAction::alloc) {
            ++c.allocs;
            c.allocs_with_stack += e.stack != snapshot::no_stack;
            const auto key = live.key(e.addr);
            if (const auto earlier = live.take(key)) {
                r.allocations[*earlier].free_event = i;  // its free fell out of the trace
                ++c.double_allocs;
            }
            r.allocations.push_back({e.addr, block_size(e.size), e.stack, i, std::nullopt, snapshot::no_stack, e.size});
            live.insert(key, r.allocations.size() - 1);
        } else if (e.action() == TraceAction::free_completed) {
            if (const auto allocation = live.take(live.key(e.addr))) {
                r.allocations[*allocation].free_event = i;
                if (e.stack != snapshot::no_stack)
                    ++(e.stack == r.allocations[*allocation].stack ? c.frees_with_alloc_stack : c.frees_with_own_stack);
            } else {
                // Allocated before the trace began. The free's stack is where it was freed (torch
                // records the context of the free), not where it was made: no site, no category.
                r.allocations.push_back(
                    {e.addr, block_size(e.size), snapshot::no_stack, std::nullopt, i, e.stack, e.size});
                ++r.frees_unseen;
                c.unseen_with_stack += e.stack != snapshot::no_stack;
            }
        }
    }
    return c;
}

// Fills r.allocated, and r.reserved unless only allocated bytes are `counted`, counted back
// from the end's totals.
void count_back(Replay& r, std::int64_t allocated_end, std::int64_t reserved_end, Counted counted,
                const std::string& file) {
    const std::size_t n = r.events.size();
    // Backward from the snapshot's totals. Sizes are the file's: every sum is checked. The
    // allocations' sizes together fit, so that any sum of some of them (a site's, a category's,
    // the live ones at a moment) fits too.
    // r.allocated holds each event's change in allocated bytes first, then, walking back, the
    // bytes before it: one array of the trace's length fewer to zero and fault in.
    std::int64_t all_sizes = 0;
    r.allocated.assign(n + 1, 0);
    for (const auto& a : r.allocations) {
        all_sizes = util::or_refuse(util::checked_add(all_sizes, std::max<std::int64_t>(a.size, 0)),
                                    "the sizes of the trace's allocations", file);
        if (a.alloc_event) r.allocated[*a.alloc_event] += a.size;
        if (a.free_event) r.allocated[*a.free_event] -= a.size;
    }
    r.allocated[n] = allocated_end;
    const bool with_reserved = counted == Counted::allocated_and_reserved;
    if (with_reserved) {
        r.reserved.assign(n + 1, 0);
        r.reserved[n] = reserved_end;
    }
    for (std::size_t i = n; i-- > 0;) {
        const auto allocated = util::checked_sub(r.allocated[i + 1], r.allocated[i]);  // r.allocated[i]: the change
        const auto reserved = with_reserved ? util::checked_sub(r.reserved[i + 1], reserved_change(r.events[i], file))
                                            : std::optional<std::int64_t>(0);
        if (!allocated || !reserved)
            util::refuse(fmt::format("the bytes {} before trace event {}", allocated ? "reserved" : "allocated", i),
                         file);
        r.allocated[i] = *allocated;
        if (with_reserved) r.reserved[i] = *reserved;
    }
}

}  // namespace

DeviceEvents events_of(const snapshot::Snapshot& snap, int device) {
    DeviceEvents events(snap.events);
    const auto& trace = snap.events;
    std::size_t on_device = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) on_device += trace.device_at(i) == device;
    if (on_device == trace.size()) {
        events.take_all();
        return events;
    }
    events.reserve(on_device);
    for (std::size_t i = 0; i < trace.size(); ++i)
        if (trace.device_at(i) == device) events.push_back(i);
    return events;
}

Replay replay(const Snapshot& snap, int device, Counted counted) {
    Replay r(snap);
    // Counted first: a long trace's event indices and allocations would otherwise be copied
    // at every doubling, which is most of a replay's page faults.
    std::size_t on_device = 0, allocations = 0;
    const auto& trace = snap.events;
    for (std::size_t i = 0; i < trace.size(); ++i)
        if (trace.device_at(i) == device) {
            ++on_device;
            const auto action = trace.action_at(i);
            allocations += action == TraceAction::alloc || action == TraceAction::free_completed;
        }
    for (const auto& seg : snap.segments)
        if (seg.device == device) allocations += seg.block_count;  // live blocks the trace did not allocate
    // Allocations are numbered in 32 bits (LiveAllocations), events too (EventIndex).
    if (std::max(on_device, allocations) >= std::numeric_limits<std::uint32_t>::max())
        throw input_error(fmt::format("{} trace events and {} allocations on one device: a replay numbers at most {}",
                                      on_device, allocations, std::numeric_limits<std::uint32_t>::max() - 1),
                          snap.source.path);
    r.allocations.reserve(allocations);
    r.events = events_of(snap, device);
    const std::size_t n = r.events.size();

    LiveAllocations live(r.allocations);
    const auto counts = pair_allocations(r, live);

    // The end: the snapshot's active blocks are what is live. Those the trace did not
    // allocate were there before it.
    std::int64_t allocated_end = 0, reserved_end = 0, lost = 0, lost_bytes = 0, made_unrecorded = 0;
    std::map<std::int64_t, std::int64_t> snapshot_blocks;  // address -> size
    for (const auto& seg : snap.segments) {
        if (seg.device != device) continue;
        if (!seg.placeholder) reserved_end += seg.total_size;
        for (const auto& b : snap.blocks_of(seg)) {
            if (!b.active()) continue;
            allocated_end += b.size;
            snapshot_blocks[b.address] = b.size;
            if (!live.find(b.address)) {
                r.allocations.push_back(
                    {b.address, b.size, b.stack, std::nullopt, std::nullopt, snapshot::no_stack, b.requested_size});
                // Made with history on, yet its alloc is not in the trace: the ring buffer lost it.
                if (b.stack != snapshot::no_stack && b.live()) {
                    ++lost;
                    lost_bytes += b.size;
                } else if (b.live()) {
                    ++made_unrecorded;
                }
            }
        }
    }
    live.for_each([&](std::size_t index) {
        auto& a = r.allocations[index];
        const auto it = snapshot_blocks.find(a.address);
        if (it == snapshot_blocks.end() || it->second < a.size) {
            r.not_in_snapshot.push_back(index);
            return;
        }
        if (it->second > a.size) {
            ++r.larger_blocks;
            r.larger_by_bytes += it->second - a.size;
        }
        a.size = it->second;  // the block as the snapshot has it
    });
    if (!r.not_in_snapshot.empty())
        r.disagreements.push_back(Fact(FactKind::live_not_in_snapshot)
                                      .count("allocations", static_cast<std::int64_t>(r.not_in_snapshot.size())));
    if (counts.double_allocs)
        r.disagreements.push_back(Fact(FactKind::twice_allocated).count("addresses", counts.double_allocs));

    count_back(r, allocated_end, reserved_end, counted, snap.source.path);
    judge_truncation(r, snap, counts, lost, lost_bytes, made_unrecorded);
    if (n > 0 && (r.allocated[0] < 0 || (!r.reserved.empty() && r.reserved[0] < 0)))
        r.disagreements.push_back(Fact(FactKind::negative_start));
    return r;
}

ReservedSweep::ReservedSweep(const Snapshot& snap, int device) : file_(snap.source.path) {
    for (const auto& seg : snap.segments)
        if (seg.device == device && !seg.placeholder) ranges_[seg.address] = {seg.address, seg.total_size, seg.stream};
}

void ReservedSweep::undo(const snapshot::TraceEvent& e, std::int64_t stream) {
    switch (e.action()) {
        case TraceAction::segment_alloc:
        case TraceAction::segment_map: {
            // Undone: the range was not reserved yet. A mapped range may be a part of a
            // larger segment: cut it out.
            const auto it = ranges_.upper_bound(e.addr);
            if (it == ranges_.begin()) break;
            auto& range = std::prev(it)->second;
            const std::int64_t range_end =
                util::or_refuse(util::checked_add(range.address, range.size), "a segment's address and size", file_);
            if (e.addr >= range_end) break;
            const std::int64_t end =
                util::or_refuse(util::checked_add(e.addr, e.size), "a trace segment event's address and size", file_);
            const ReservedRange before{range.address, e.addr - range.address, range.stream};
            const ReservedRange after{end, range_end - end, range.stream};
            ranges_.erase(std::prev(it));
            if (before.size > 0) ranges_[before.address] = before;
            if (after.size > 0) ranges_[after.address] = after;
            break;
        }
        case TraceAction::segment_free:
        case TraceAction::segment_unmap:
            ranges_[e.addr] = {e.addr, e.size, stream};  // undone: still reserved
            break;
        default:
            break;
    }
}

std::vector<ReservedRange> ReservedSweep::ranges() const {
    std::vector<ReservedRange> out;
    for (const auto& [address, range] : ranges_) out.push_back(range);
    return out;
}

std::vector<ReservedRange> reserved_at(const Snapshot& snap, const Replay& r, int device, std::size_t moment) {
    ReservedSweep sweep(snap, device);
    for (std::size_t i = r.events.size(); i-- > moment;) sweep.undo(r.events[i], snap.stream_of(r.events[i]));
    return sweep.ranges();
}

}  // namespace memsnap::analysis::detail
