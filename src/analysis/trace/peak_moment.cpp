#include "peak_moment.hpp"

#include <memsnap/util/checked.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/id_index.hpp>

#include <algorithm>
#include <bit>
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
};

// The allocations live at a moment of the forward pass, by address: when each was made and
// its block's size, held in the index's own slots. A free reads one slot, where a table of
// entries beside the index took a read of the entry as well; on a long trace both are larger
// than a core's cache, and those reads were most of the pass.
class LiveByAddress {
  public:
    struct Slot {
        std::int64_t address = 0;
        std::uint32_t made_at_plus_one = 0;  // 0: empty
        std::uint32_t size_units = 0;        // the block's size in units of 512
    };
    // Larger blocks (2 TiB and more, or not a multiple of 512: only a crafted file) do not fit
    // a slot.
    static bool fits(std::int64_t block) { return block % kUnit == 0 && block / kUnit <= kMaxUnits; }
    static constexpr std::int64_t kUnit = 512;
    static constexpr std::int64_t kMaxUnits = std::numeric_limits<std::uint32_t>::max();

    // Sized for `expected` allocations live at once: growing there would copy every slot at
    // each doubling, into fresh pages, and on a long trace that was a fifth of the pass.
    explicit LiveByAddress(std::size_t expected)
        : slots_(std::bit_ceil(std::max<std::size_t>(2 * expected, 1024))), home_(slots_.size()) {}

    std::uint64_t hash(std::int64_t address) const { return home_(static_cast<std::uint64_t>(address)); }
    [[gnu::always_inline]] void prefetch(std::uint64_t hash) const {
        __builtin_prefetch(&slots_[hash & (slots_.size() - 1)]);
    }
    // An index larger than a core's own cache: its lookups wait for memory unless asked for
    // ahead, which costs more than it saves on smaller ones.
    bool out_of_cache() const { return slots_.size() * sizeof(Slot) > (std::size_t{4} << 20); }

    // The slot of the allocation live at `address`, filed under `hash`; nullptr when none is.
    const Slot* find(std::uint64_t hash, std::int64_t address) const {
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t at = hash & mask; slots_[at].made_at_plus_one != 0; at = (at + 1) & mask)
            if (slots_[at].address == address) return &slots_[at];
        return nullptr;
    }

    // The slot for `address`: the live allocation's, or an empty one claimed for it
    // (made_at_plus_one 0, for the caller to fill).
    Slot& claim(std::uint64_t hash, std::int64_t address) {
        if (2 * (count_ + 1) > slots_.size()) {
            grow();
            hash = this->hash(address);  // one more index bit
        }
        const std::size_t mask = slots_.size() - 1;
        std::size_t at = hash & mask;
        for (; slots_[at].made_at_plus_one != 0; at = (at + 1) & mask)
            if (slots_[at].address == address) return slots_[at];
        ++count_;
        slots_[at].address = address;
        return slots_[at];
    }

    // Removes the allocation live at `address` and returns its slot as it was; made_at_plus_one
    // 0 when none was.
    Slot take(std::uint64_t hash, std::int64_t address) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t gap = hash & mask;
        for (; slots_[gap].made_at_plus_one != 0; gap = (gap + 1) & mask)
            if (slots_[gap].address == address) break;
        const Slot taken = slots_[gap];
        if (taken.made_at_plus_one == 0) return taken;
        util::erase_slot(
            slots_.data(), mask, gap, [](const Slot& s) { return s.made_at_plus_one == 0; },
            [this](const Slot& s) { return this->hash(s.address); });
        --count_;
        return taken;
    }

    template <class Fn>
    void for_each(Fn&& fn) const {
        for (const Slot& s : slots_)
            if (s.made_at_plus_one != 0) fn(s);
    }
    std::size_t size() const { return count_; }

  private:
    void grow() {
        home_.doubled();  // hash() gives the larger table's homes
        util::double_table(
            slots_, [](const Slot& s) { return s.made_at_plus_one == 0; },
            [this](const Slot& s) { return hash(s.address); });
    }
    std::vector<Slot> slots_;
    util::MultiplyShift home_;
    std::size_t count_ = 0;
};

// An allocation the trace made and freed (or saw allocated again): trace positions.
struct Lifetime {
    std::uint32_t made_at, freed_at;
};

// The moments of 256 consecutive trace positions: the running total before the first, and the
// highest of them.
struct Chunk {
    std::int64_t start = 0;
    Highest high;
};
constexpr std::uint32_t kChunkBits = 8;

// A block still live at the end that the snapshot shows larger than its request raises every
// moment after its making by the difference.
struct Raise {
    std::uint32_t made_at;
    std::int64_t by;
};

}  // namespace

std::size_t expected_live(const snapshot::TraceEvents& trace, int device) {
    std::int64_t live = 0, most = 0;
    for (std::size_t i = 0; i < trace.size(); ++i) {
        const auto action = trace.action_at(i);
        if (action == TraceAction::alloc && trace.device_at(i) == device)
            most = std::max(most, ++live);
        else if (action == TraceAction::free_completed && trace.device_at(i) == device)
            --live;
    }
    return std::min({static_cast<std::size_t>(most), trace.size() / 4, kMostExpectedLive});
}

std::optional<PeakMoment> peak_moment(const Snapshot& snap, int device) {
    const auto& trace = snap.events;
    // replay() numbers events and allocations in 32 bits and refuses past that: so does this,
    // through it. Trace positions fit 32 bits below that.
    if (trace.size() + snap.blocks.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
        return peak_moment_by_replay(snap, device);
    const auto end = static_cast<std::uint32_t>(trace.size());

    // Forward, pairing allocs with frees as replay() does: the running total of allocated bytes
    // from 0, the highest of each chunk of moments, and when each freed allocation was made and
    // freed. Which moments the end's larger blocks raise is known only at the end: a chunk they
    // fall in is walked again then.
    LiveByAddress live(expected_live(trace, device));
    // sizes: of every allocation, as replay() checks them. A file's sizes may sum past 64 bits,
    // which replay() refuses: such a file goes to it. Below that, no running total can leave 64
    // bits either (each is a sum of some of the sizes, less others), and 64-bit sums keep the
    // pass's registers for its hot loop.
    std::int64_t total = 0, traced_sizes = 0;
    std::int64_t allocs = 0;
    std::uint32_t events = 0, last = 0;
    std::vector<Lifetime> freed;
    freed.reserve(std::min<std::size_t>(trace.size() / 2, std::size_t{1} << 24));  // address space: pages as used
    using MadeBefore = std::pair<std::uint32_t, Allocation>;                       // freed at this trace position
    std::vector<MadeBefore> made_before_trace;
    std::vector<Chunk> chunks((std::size_t{end} >> kChunkBits) + 1);
    std::int64_t highest_total = std::numeric_limits<std::int64_t>::min();  // over the moments so far
    std::uint32_t highest_at = 0;                                           // its first moment
    constexpr std::uint32_t ahead = 8;
    for (std::uint32_t from = 0, c = 0; from < end; from += 1u << kChunkBits, ++c) {
        const std::uint32_t to = std::min(end, from + (1u << kChunkBits));
        Chunk& chunk = chunks[c];
        chunk.start = total;
        const bool prefetch = live.out_of_cache();
        for (std::uint32_t i = from; i < to; ++i) {
            if (prefetch && i + ahead < end) live.prefetch(live.hash(trace[i + ahead].addr));
            if (trace.device_at(i) != device) continue;
            ++events;
            last = i;
            chunk.high.add(total, i);
            // A new highest total: no moment before it can be the peak (the end's larger
            // blocks raise later moments by as much or more), so what was freed before it
            // cannot be live then, and is let go.
            if (total > highest_total) {
                highest_total = total;
                highest_at = i;
                freed.clear();
                made_before_trace.clear();
            }
            const auto action = trace.action_at(i);
            if (action != TraceAction::alloc && action != TraceAction::free_completed) continue;
            const auto e = trace[i];
            const auto hash = live.hash(e.addr);
            if (action == TraceAction::alloc) {
                const auto size = block_size(e.size);
                if (!LiveByAddress::fits(size)) return peak_moment_by_replay(snap, device);
                auto& slot = live.claim(hash, e.addr);
                // An address live and allocated again: its free fell out of the trace.
                if (slot.made_at_plus_one != 0) {
                    total -= std::int64_t{slot.size_units} * LiveByAddress::kUnit;
                    freed.push_back({slot.made_at_plus_one - 1, i});
                }
                slot.made_at_plus_one = i + 1;
                slot.size_units = static_cast<std::uint32_t>(size / LiveByAddress::kUnit);
                ++allocs;
                total += size;
                if (__builtin_add_overflow(traced_sizes, size, &traced_sizes))
                    return peak_moment_by_replay(snap, device);
            } else if (const auto taken = live.take(hash, e.addr); taken.made_at_plus_one != 0) {
                total -= std::int64_t{taken.size_units} * LiveByAddress::kUnit;
                freed.push_back({taken.made_at_plus_one - 1, i});
            } else {
                // Made before the trace began. The free's stack is where it was freed: no site.
                const auto size = block_size(e.size);
                made_before_trace.push_back(
                    {i, {e.addr, size, snapshot::no_stack, std::nullopt, std::nullopt, e.stack, e.size}});
                total -= size;
                if (__builtin_add_overflow(traced_sizes, size, &traced_sizes))
                    return peak_moment_by_replay(snap, device);
            }
        }
    }
    if (events == 0) return std::nullopt;

    // The end: the snapshot's active blocks. Those the trace did not allocate were there
    // before it; a block still live is as large as the snapshot has it (the last block at its
    // address, where a crafted file gives two, as replay() reads them).
    Wide allocated_end = 0, sizes = traced_sizes;
    std::vector<std::pair<std::uint32_t, std::int64_t>> at_end;  // made at, the snapshot's size
    std::vector<Allocation> untraced;
    for (const auto& seg : snap.segments) {
        if (seg.device != device) continue;
        for (const auto& b : snap.blocks_of(seg)) {
            if (!b.active()) continue;
            allocated_end += b.size;
            if (const auto* slot = live.find(live.hash(b.address), b.address)) {
                at_end.emplace_back(slot->made_at_plus_one - 1, b.size);
            } else {
                untraced.push_back(
                    {b.address, b.size, b.stack, std::nullopt, std::nullopt, snapshot::no_stack, b.requested_size});
                sizes += std::max<std::int64_t>(b.size, 0);
            }
        }
    }
    std::ranges::stable_sort(at_end, {}, &std::pair<std::uint32_t, std::int64_t>::first);
    std::vector<Raise> raises;
    std::vector<std::pair<std::uint32_t, std::int64_t>> held_at_end;  // made at, as allocated: the snapshot holds it
    for (std::size_t k = 0; k < at_end.size(); ++k) {
        if (k + 1 < at_end.size() && at_end[k + 1].first == at_end[k].first) continue;  // the last block counts
        const auto [made_at, size_at_end] = at_end[k];
        const auto size = block_size(trace[made_at].size);
        if (size_at_end >= size) held_at_end.emplace_back(made_at, size);
        if (size_at_end > size) {
            raises.push_back({made_at, size_at_end - size});
            sizes += Wide{size_at_end} - size;
        }
    }
    // The highest moment, each raised by the growth of the blocks made before it: a chunk that
    // a raise falls in is walked again, its frees' sizes read from the allocations they freed.
    Wide raise = 0, high = std::numeric_limits<std::int64_t>::min();
    std::uint32_t high_at = 0;
    const auto consider = [&](Wide value, std::uint32_t at) {
        if (value > high) {
            high = value;
            high_at = at;
        }
    };
    auto next_raise = raises.begin();
    for (std::uint32_t from = 0, c = 0; from < end; from += 1u << kChunkBits, ++c) {
        const std::uint32_t to = std::min(end, from + (1u << kChunkBits));
        if (next_raise == raises.end() || next_raise->made_at >= to) {
            if (chunks[c].high.total != std::numeric_limits<std::int64_t>::min())
                consider(chunks[c].high.total + raise, chunks[c].high.at);
            continue;
        }
        // Walked from the first moment of the highest total at the latest: the frees before it
        // were let go, and no moment before it is the peak.
        if (to <= highest_at) {
            for (; next_raise != raises.end() && next_raise->made_at < to; ++next_raise) raise += next_raise->by;
            continue;
        }
        const std::uint32_t walk_from = std::max(from, highest_at);
        for (; next_raise != raises.end() && next_raise->made_at < walk_from; ++next_raise) raise += next_raise->by;
        Wide running = walk_from == from ? chunks[c].start : highest_total;
        auto paired = std::ranges::lower_bound(freed, walk_from, {}, &Lifetime::freed_at);
        for (std::uint32_t i = walk_from; i < to; ++i) {
            if (trace.device_at(i) != device) continue;
            consider(running + raise, i);
            for (; next_raise != raises.end() && next_raise->made_at == i; ++next_raise) raise += next_raise->by;
            const auto action = trace.action_at(i);
            if (action != TraceAction::alloc && action != TraceAction::free_completed) continue;
            const bool pairs = paired != freed.end() && paired->freed_at == i;
            if (pairs) running -= block_size(trace[(paired++)->made_at].size);
            if (action == TraceAction::alloc)
                running += block_size(trace[i].size);
            else if (!pairs)
                running -= block_size(trace[i].size);
        }
    }
    consider(total + raise, end);
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
    // the trace never saw. Those the trace made are those still live at the end and those freed
    // after the peak, marked by position (a sort of tens of thousands took longer) and merged
    // with the blocks made before the trace, in that order already. alloc_event holds a trace
    // position until the end.
    std::vector<std::uint64_t> made_by_position(high_at / 64 + 1, 0);
    const auto mark = [&made_by_position](std::uint32_t at) {
        made_by_position[at / 64] |= std::uint64_t{1} << (at % 64);
    };
    std::size_t marked = 0;
    std::int64_t marked_bytes = 0;  // as allocated
    live.for_each([&](const LiveByAddress::Slot& s) {
        if (s.made_at_plus_one - 1 >= high_at) return;
        mark(s.made_at_plus_one - 1), ++marked;
        marked_bytes += std::int64_t{s.size_units} * LiveByAddress::kUnit;
    });
    // Those still live at the end that the snapshot does not hold: all marked so far but those
    // it does.
    out.not_in_snapshot = marked;
    out.not_in_snapshot_bytes = marked_bytes;
    for (const auto& [made_at, size] : held_at_end) {
        if (made_at >= high_at) break;
        --out.not_in_snapshot;
        out.not_in_snapshot_bytes -= size;
    }
    for (const auto& f : freed)
        if (f.made_at < high_at && high_at <= f.freed_at) mark(f.made_at), ++marked;
    // Made before the trace and freed at the peak or after it: live then, each placed by its free.
    auto pre = std::ranges::lower_bound(made_before_trace, high_at, {}, &MadeBefore::first);
    out.live.reserve(marked + static_cast<std::size_t>(made_before_trace.end() - pre) + untraced.size());
    const auto made_before = [&](std::uint32_t at) {  // those freed before `at`, in order
        for (; pre != made_before_trace.end() && pre->first < at; ++pre) out.live.push_back(pre->second);
    };
    auto grown = raises.begin();
    for (std::size_t word = 0; word < made_by_position.size(); ++word)
        for (std::uint64_t bits = made_by_position[word]; bits != 0; bits &= bits - 1) {
            const auto at = static_cast<std::uint32_t>(word * 64 + static_cast<std::size_t>(std::countr_zero(bits)));
            made_before(at);
            const auto e = trace[at];
            // The request, from its alloc event; a block still live is as large as the end has it.
            auto size = block_size(e.size);
            for (; grown != raises.end() && grown->made_at < at; ++grown) {
            }
            if (grown != raises.end() && grown->made_at == at) size += grown->by;
            out.live.push_back({e.addr, size, e.stack, at, std::nullopt, snapshot::no_stack, e.size});
        }
    made_before(end);
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
    for (const auto index : r.not_in_snapshot)
        if (const auto& a = r.allocations[index]; a.live_at(out.at)) {
            ++out.not_in_snapshot;
            out.not_in_snapshot_bytes += a.size;
        }
    return out;
}

}  // namespace memsnap::analysis::detail
