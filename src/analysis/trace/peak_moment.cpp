#include "peak_moment.hpp"

#include <memsnap/util/checked.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/id_index.hpp>

#include <algorithm>
#include <limits>

namespace memsnap::analysis::detail {

using snapshot::Snapshot;
using snapshot::TraceAction;
using util::Wide;

namespace {

// The highest running total over a run of consecutive moments, and the first moment it is
// reached. A moment is the trace position of the event it comes before.
struct Highest {
    std::int64_t total = std::numeric_limits<std::int64_t>::min();
    std::uint32_t at = 0;

    void add(std::int64_t running, std::uint32_t moment) {
        if (running > total) {
            total = running;
            at = moment;
        }
    }
    // The moments of `later` all come after these.
    void absorb(const Highest& later) {
        if (later.total > total) *this = later;
    }
};

// The allocations live at a moment of the forward pass, by address and in the order they were
// made, each holding the highest of the moments from its making to the next live one's. When
// one is freed its moments join those of the one made before it. The end's snapshot may show a
// block still live larger than its request, which raises every moment after its making by the
// difference: so at the end the allocations still live cut the moments into runs that each
// move by one amount, and each run's highest moment is all that is needed of it.
class LiveRuns {
  public:
    struct Entry {
        std::int64_t address = 0, size = 0;
        snapshot::StackId stack;
        std::uint32_t made_at = 0;         // trace position of its alloc
        std::uint32_t prev = 0, next = 0;  // by making; entry 0 heads the list and is never live
        Highest moments;
    };

    // `most`: how many can be live at once, at most. Only the address space is taken for them
    // up front (up to 2^24 entries; a longer trace's set grows past that by copying): pages
    // are touched as they are used, and nothing is copied as the set grows.
    explicit LiveRuns(std::size_t most) : seed_(util::hash_seed()) {
        entries_.reserve(std::min<std::size_t>(most, kReservedAtMost) + 1);
        entries_.emplace_back();
    }
    static constexpr std::size_t kReservedAtMost = std::size_t{1} << 24;

    auto at(std::int64_t address) const {
        return [this, address](std::uint32_t id) { return entries_[id].address == address; };
    }
    std::uint64_t hash(std::int64_t address) const {
        return util::mix_hash(seed_, static_cast<std::uint64_t>(address));
    }
    // The entry of the allocation live at `address`, if one is.
    std::optional<std::uint32_t> find(std::int64_t address) const { return index_.find(hash(address), at(address)); }
    [[gnu::always_inline]] void prefetch(std::int64_t address) const { index_.prefetch(hash(address)); }
    // An index larger than a core's own cache: its lookups wait for memory unless asked for
    // ahead. Asked ahead always, this pass took 13% less time on the ctx128 forward scaled to
    // 400 MiB (an index of 8 MiB) and 4-5% more on training steps (indexes of 2 MiB and less).
    bool index_out_of_cache() const { return index_.bytes() > (std::size_t{2} << 20); }
    std::size_t size() const { return index_.size(); }   // live now
    std::size_t ids() const { return entries_.size(); }  // entry ids are below this

    // The moments since the newest live allocation was made (since the start when none is
    // live): kept apart from the entries, as every event adds one.
    Highest& newest_moments() { return open_; }

    void add(std::uint64_t hash, std::int64_t address, std::int64_t size, snapshot::StackId stack,
             std::uint32_t made_at) {
        std::uint32_t id = free_;
        if (id != 0) {
            free_ = entries_[id].next;
        } else {
            id = static_cast<std::uint32_t>(entries_.size());
            entries_.emplace_back();
        }
        entries_[id] = {address, size, stack, made_at, newest_, 0, {}};
        entries_[newest_].next = id;
        entries_[newest_].moments = open_;
        open_ = {};
        newest_ = id;
        index_.insert(hash, id);
    }

    struct Taken {
        std::int64_t size;
        std::uint32_t made_at;
    };
    // The allocation live at `address` (filed under `hash`), no longer live.
    std::optional<Taken> take(std::uint64_t hash, std::int64_t address) {
        const auto id = index_.erase(hash, at(address));
        if (!id) return std::nullopt;
        Entry& e = entries_[*id];
        Entry& before = entries_[e.prev];
        before.next = e.next;
        if (e.next != 0) {
            before.moments.absorb(e.moments);
            entries_[e.next].prev = e.prev;
        } else {  // the newest: the one made before it is now, with both runs open
            before.moments.absorb(open_);
            open_ = before.moments;
            newest_ = e.prev;
        }
        e.next = free_;
        free_ = *id;
        return Taken{e.size, e.made_at};
    }

    // After the last moment: every run in its entry.
    void close() { entries_[newest_].moments = open_; }
    const Highest& start_moments() const { return entries_[0].moments; }
    // fn(id, entry) for the live allocations, oldest first.
    template <class Fn>
    void for_each(Fn&& fn) {
        for (std::uint32_t id = entries_[0].next; id != 0; id = entries_[id].next) fn(id, entries_[id]);
    }

  private:
    std::uint64_t seed_;
    std::vector<Entry> entries_;
    util::IdIndex index_;
    std::uint32_t newest_ = 0;
    std::uint32_t free_ = 0;  // entries to reuse, chained by `next`; 0: none
    Highest open_;            // the newest entry's run, while it is open
};

// An allocation the trace made and freed (or saw allocated again): trace positions.
struct Lifetime {
    std::uint32_t made_at, freed_at;
};

}  // namespace

std::optional<PeakMoment> peak_moment(const Snapshot& snap, int device) {
    const auto& trace = snap.events;
    // replay() numbers events and allocations in 32 bits and refuses past that: so does this,
    // through it. Trace positions fit 32 bits below that.
    if (trace.size() + snap.blocks.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        return peak_moment_by_replay(snap, device);
    const auto end = static_cast<std::uint32_t>(trace.size());

    // Forward, pairing allocs with frees as replay() does: the running total of allocated bytes
    // from 0, each moment filed in its run, and when each freed allocation was made and freed.
    LiveRuns live(trace.size());
    // Wide: a file's sizes may sum past 64 bits, which replay() refuses (below).
    Wide total = 0, sizes = 0;  // sizes: of every allocation, as replay() checks them
    std::int64_t allocs = 0;
    std::uint32_t events = 0, last = 0;
    std::vector<Lifetime> freed;
    freed.reserve(std::min(trace.size() / 2, LiveRuns::kReservedAtMost));  // address space, as LiveRuns
    using MadeBefore = std::pair<std::uint32_t, Allocation>;               // freed at this trace position
    std::vector<MadeBefore> made_before_trace;
    constexpr std::uint32_t ahead = 8;
    for (std::uint32_t i = 0; i < end; ++i) {
        if (i + ahead < end && live.index_out_of_cache()) live.prefetch(trace[i + ahead].addr);
        if (trace.device_at(i) != device) continue;
        ++events;
        last = i;
        live.newest_moments().add(static_cast<std::int64_t>(total), i);
        const auto action = trace.action_at(i);
        if (action != TraceAction::alloc && action != TraceAction::free_completed) continue;
        const auto e = trace[i];
        const auto hash = live.hash(e.addr);
        const auto earlier = live.take(hash, e.addr);
        if (earlier) {
            total -= earlier->size;
            freed.push_back({earlier->made_at, i});
        }
        if (action == TraceAction::alloc) {
            // An address live and allocated again: its free fell out of the trace.
            ++allocs;
            const auto size = block_size(e.size);
            live.add(hash, e.addr, size, e.stack, i);
            total += size;
            sizes += size;
        } else if (!earlier) {
            // Made before the trace began. The free's stack is where it was freed: no site.
            const auto size = block_size(e.size);
            made_before_trace.push_back(
                {i, {e.addr, size, snapshot::no_stack, std::nullopt, std::nullopt, e.stack, e.size}});
            total -= size;
            sizes += size;
        }
    }
    if (events == 0) return std::nullopt;
    live.newest_moments().add(static_cast<std::int64_t>(total), end);
    live.close();

    // The end: the snapshot's active blocks. Those the trace did not allocate were there
    // before it; a block still live is as large as the snapshot has it (the last block at its
    // address, where a crafted file gives two, as replay() reads them).
    Wide allocated_end = 0;
    std::vector<std::int64_t> size_at_end(live.ids(), 0);
    std::vector<bool> in_snapshot(live.ids(), false);
    std::vector<Allocation> untraced;
    for (const auto& seg : snap.segments) {
        if (seg.device != device) continue;
        for (const auto& b : snap.blocks_of(seg)) {
            if (!b.active()) continue;
            allocated_end += b.size;
            if (const auto id = live.find(b.address)) {
                size_at_end[*id] = b.size;
                in_snapshot[*id] = true;
            } else {
                untraced.push_back(
                    {b.address, b.size, b.stack, std::nullopt, std::nullopt, snapshot::no_stack, b.requested_size});
                sizes += std::max<std::int64_t>(b.size, 0);
            }
        }
    }
    // The runs in order, each raised by the growth of the blocks made before it.
    Wide raise = 0, high = live.start_moments().total;
    std::uint32_t high_at = live.start_moments().at;
    live.for_each([&](std::uint32_t id, LiveRuns::Entry& e) {
        if (in_snapshot[id] && size_at_end[id] > e.size) {
            raise += Wide{size_at_end[id]} - e.size;
            sizes += Wide{size_at_end[id]} - e.size;
            e.size = size_at_end[id];
        }
        if (e.moments.total + raise > high) {
            high = e.moments.total + raise;
            high_at = e.moments.at;
        }
    });
    // Bytes allocated before each event are counted back from the end's, and every running
    // total lies within the sizes of all allocations either side of 0. replay() refuses a
    // capture whose sizes or counts leave 64 bits, and says where: a capture that might (none
    // a GPU writes comes near) goes to it.
    const Wide bound = (allocated_end < 0 ? -allocated_end : allocated_end) + 2 * sizes;
    if (bound > std::numeric_limits<std::int64_t>::max()) return peak_moment_by_replay(snap, device);
    const Wide base = allocated_end - (total + raise);
    if (allocs == 0) return std::nullopt;  // nothing recorded: no peak to find

    PeakMoment out;
    out.allocated = static_cast<std::int64_t>(base + high);
    // Timed by the device's event that reached it: the last one before the moment.
    std::uint32_t reached_by = high_at == end ? last : high_at;
    for (std::uint32_t i = std::min(high_at, end); i-- > 0;)
        if (trace.device_at(i) == device) {
            reached_by = i;
            break;
        }
    out.time_us = trace[reached_by].time_us;
    // Live at the peak, in replay()'s order: the trace's allocations by the event that made
    // them (an alloc, or the free of a block made before the trace), then the snapshot's blocks
    // the trace never saw. Those still live at the end and the blocks made before the trace
    // are in that order already; the ones freed after the peak are sorted, and the three merged.
    // alloc_event holds a trace position until the end.
    std::vector<Allocation> freed_later;
    for (const auto& f : freed)
        if (f.made_at < high_at && high_at <= f.freed_at) {
            const auto e = trace[f.made_at];
            freed_later.push_back(
                {e.addr, block_size(e.size), e.stack, f.made_at, std::nullopt, snapshot::no_stack, e.size});
        }
    std::ranges::sort(freed_later, {}, [](const Allocation& a) { return *a.alloc_event; });
    auto later = freed_later.begin();
    auto fresh = std::ranges::lower_bound(made_before_trace, high_at, {}, &MadeBefore::first);
    // At most this many (a trace that leaks holds hundreds of thousands): reserved, not grown.
    out.live.reserve(live.size() + freed_later.size() + static_cast<std::size_t>(made_before_trace.end() - fresh) +
                     untraced.size());
    const auto add_made_before = [&](std::uint32_t position) {  // the others made before `position`
        for (;;) {
            const bool has_later = later != freed_later.end() && *later->alloc_event < position;
            const bool has_fresh = fresh != made_before_trace.end() && fresh->first < position;
            if (has_later && (!has_fresh || *later->alloc_event < fresh->first))
                out.live.push_back(*later++);
            else if (has_fresh)
                out.live.push_back((fresh++)->second);
            else
                return;
        }
    };
    live.for_each([&](std::uint32_t, const LiveRuns::Entry& e) {
        if (e.made_at >= high_at) return;
        add_made_before(e.made_at);
        // The request, from its alloc event: an entry keeps only the block's size.
        out.live.push_back(
            {e.address, e.size, e.stack, e.made_at, std::nullopt, snapshot::no_stack, trace[e.made_at].size});
    });
    add_made_before(end);
    out.live.insert(out.live.end(), untraced.begin(), untraced.end());
    // Trace positions to the device's event numbers: the same when the trace is of it alone.
    out.at = high_at;
    if (events != end) {
        std::uint32_t k = 0;
        auto next = out.live.begin();
        for (std::uint32_t i = 0; i <= end; ++i) {
            for (; next != out.live.end() && (!next->alloc_event || *next->alloc_event <= i); ++next)
                if (next->alloc_event) next->alloc_event = k;
            if (i == high_at) out.at = k;
            if (i < end && trace.device_at(i) == device) ++k;
        }
    }
    return out;
}

std::optional<PeakMoment> peak_moment_by_replay(const Snapshot& snap, int device) {
    const auto r = replay(snap, device, Counted::allocated);
    if (r.events.empty() || !r.recorded) return std::nullopt;
    PeakMoment out;
    out.at = static_cast<std::size_t>(std::max_element(r.allocated.begin(), r.allocated.end()) - r.allocated.begin());
    out.allocated = r.allocated[out.at];
    out.time_us = r.events.time_before(out.at);
    for (auto a : r.allocations)
        if (a.live_at(out.at)) {
            a.free_event = std::nullopt;
            out.live.push_back(a);
        }
    return out;
}

}  // namespace memsnap::analysis::detail
