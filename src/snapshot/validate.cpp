// The checks of a finished model: what does not add up becomes a warning with a count, and
// sizes no GPU could hold are refused, so that every total computed later fits in int64.
#include "builder.hpp"

#include <memsnap/error.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/id_index.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

namespace memsnap::snapshot::detail {

namespace {

__extension__ using Wide = __int128;

struct Counts {
    std::uint64_t negative_sizes = 0, unbalanced_segments = 0, overlapping_blocks = 0, shared_addresses = 0;
    std::uint64_t frees_without_alloc = 0;
};

void count_sizes(Snapshot& out, Counts& c) {
    for (auto& seg : out.segments)
        if (seg.total_size < 0) {
            seg.total_size = 0;
            ++c.negative_sizes;
        }
    for (auto& b : out.blocks) {
        if (b.size < 0) {
            b.size = 0;
            ++c.negative_sizes;
        }
        if (b.requested_size < 0) {
            b.requested_size = 0;
            ++c.negative_sizes;
        }
    }
}

void check_sums(const Snapshot& out, const std::string& name) {
    Wide reserved = 0, blocks = 0, requested = 0;
    for (const auto& seg : out.segments) reserved += seg.total_size;
    for (const auto& b : out.blocks) {
        blocks += b.size;
        requested += b.requested_size;
    }
    constexpr Wide limit = INT64_MAX;
    if (reserved > limit || blocks > limit || requested > limit)
        throw input_error(
            "the segment or block sizes add up to more than 2^63 bytes, which no GPU holds: the "
            "file is damaged or crafted",
            name);
}

void count_layout(const Snapshot& out, Counts& c) {
    for (const auto& seg : out.segments) {
        Wide sum = 0;
        Wide end = seg.address;
        for (const auto& b : out.blocks_of(seg)) {
            sum += b.size;
            if (b.address < end) ++c.overlapping_blocks;
            end = static_cast<Wide>(b.address) + b.size;
        }
        if (sum != seg.total_size) ++c.unbalanced_segments;
    }
    std::vector<std::tuple<int, std::int64_t>> live;
    for (const auto& b : out.blocks)
        if (b.live()) live.emplace_back(out.segments[b.segment].device, b.address);
    std::sort(live.begin(), live.end());
    for (std::size_t i = 1; i < live.size(); ++i)
        if (live[i] == live[i - 1]) ++c.shared_addresses;
}

// The (device, address) pairs whose last alloc or free was a free_completed: a free there
// frees an address already freed. Only that state tells anything, so an alloc or a
// free_requested takes its pair out: the set holds every address named so far less those
// allocated or waiting for their free, where a table of every address named held them too.
// One open-addressed table of 8-byte slots; real addresses fit 48 bits and devices 8, any
// other key goes to a set.
class FreedAddresses {
  public:
    // Marks the pair freed; whether it was already.
    bool insert(std::int16_t device, std::int64_t address) {
        if (odd(device, address)) return !others_.emplace(device, address).second;
        const std::uint64_t slot = slot_of(device, address);
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t at = home(slot) & mask;; at = (at + 1) & mask) {
            if (slots_[at] == slot) return true;
            if (slots_[at] == 0) {
                slots_[at] = slot;
                if (2 * ++count_ > slots_.size()) grow();
                return false;
            }
        }
    }
    // Takes the pair out; whether it was freed.
    bool erase(std::int16_t device, std::int64_t address) {
        if (odd(device, address)) return others_.erase({device, address}) != 0;
        const std::uint64_t slot = slot_of(device, address);
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t at = home(slot) & mask; slots_[at] != 0; at = (at + 1) & mask)
            if (slots_[at] == slot) {
                util::erase_slot(
                    slots_.data(), mask, at, [](std::uint64_t s) { return s == 0; },
                    [this](std::uint64_t s) { return home(s); });
                --count_;
                return true;
            }
        return false;
    }

  private:
    static bool odd(std::int16_t device, std::int64_t address) {
        return address < 0 || address >= std::int64_t{1} << 48 || device < 0 || device > 0xFF;
    }
    static std::uint64_t slot_of(std::int16_t device, std::int64_t address) {  // never 0: empty
        return (static_cast<std::uint64_t>(address) << 8 | static_cast<std::uint64_t>(device)) << 1 | 1;
    }
    std::size_t home(std::uint64_t slot) const { return home_(slot); }
    void grow() {
        home_.doubled();
        util::double_table(
            slots_, [](std::uint64_t s) { return s == 0; }, [this](std::uint64_t s) { return home(s); });
    }
    std::vector<std::uint64_t> slots_ = std::vector<std::uint64_t>(1024, 0);
    std::size_t count_ = 0;
    util::MultiplyShift home_{slots_.size()};
    std::set<std::pair<std::int16_t, std::int64_t>> others_;
};

// A free of an address the trace had already freed, with no alloc in between. A first event
// that is a free is normal (the alloc came before the ring buffer's oldest entry), and so is
// every free on a device whose alloc events were skipped (skip_actions), so neither counts.
void count_trace(const Snapshot& out, Counts& c) {
    std::vector<bool> device_allocs;
    const auto& events = out.events;
    for (std::size_t i = 0; i < events.size(); ++i)  // the action and device alone decoded
        if (events.action_at(i) == TraceAction::alloc) {
            const auto d = static_cast<std::size_t>(static_cast<std::uint16_t>(events.device_at(i)));
            if (d >= device_allocs.size()) device_allocs.resize(d + 1, false);
            device_allocs[d] = true;
        }
    // No prefetch ahead. GCC had dropped the one here (it takes a function that only prefetches
    // for one without effect); emitted, it made this pass 3-15% slower on the real shapes
    // scaled to 400 MiB.
    FreedAddresses freed;
    for (const auto e : out.events) {
        const auto action = e.action();
        if (action != TraceAction::alloc && action != TraceAction::free_requested &&
            action != TraceAction::free_completed)
            continue;
        const auto d = static_cast<std::size_t>(static_cast<std::uint16_t>(e.device));
        if (d >= device_allocs.size() || !device_allocs[d]) continue;
        const bool was_freed =
            action == TraceAction::free_completed ? freed.insert(e.device, e.addr) : freed.erase(e.device, e.addr);
        if (action != TraceAction::alloc && was_freed) ++c.frees_without_alloc;
    }
}

}  // namespace

void ModelBuilder::validate(const std::string& name) {
    Counts c;
    count_sizes(out_, c);
    check_sums(out_, name);
    count_layout(out_, c);
    count_trace(out_, c);
    auto& w = out_.warnings;
    if (c.negative_sizes) w.push_back(fmt::format("{} negative size(s) were counted as 0 bytes", c.negative_sizes));
    if (c.unbalanced_segments)
        w.push_back(
            fmt::format("{} segment(s) hold blocks that do not add up to the segment's size", c.unbalanced_segments));
    if (c.overlapping_blocks)
        w.push_back(fmt::format("{} block(s) overlap the block before them", c.overlapping_blocks));
    if (c.shared_addresses)
        w.push_back(fmt::format("{} live block(s) share an address with another live block", c.shared_addresses));
    if (c.frees_without_alloc)
        w.push_back(
            fmt::format("{} trace free event(s) free an address that the trace had already freed, with "
                        "no alloc in between",
                        c.frees_without_alloc));
    if (unreadable_frames_)
        w.push_back(
            fmt::format("{} frame(s) have a filename, name or line of the wrong type; stacks holding "
                        "them are left out",
                        unreadable_frames_));
    if (unreadable_stacks_)
        w.push_back(fmt::format("{} block(s) carry frames that cannot be read; they count as without a stack",
                                unreadable_stacks_));
    if (bad_annotations_)
        w.push_back(fmt::format("{} external annotation(s) name a device that is not a device index; left out",
                                bad_annotations_));
}

}  // namespace memsnap::snapshot::detail
