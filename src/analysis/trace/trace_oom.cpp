#include "trace_oom.hpp"

#include <memsnap/util/checked.hpp>

#include <algorithm>

namespace memsnap::analysis::detail {

FreeSpace free_space_at(const snapshot::Snapshot& snap, const Replay& r, int device, std::size_t moment,
                        std::int64_t stream) {
    std::vector<std::pair<std::int64_t, std::int64_t>> live;  // (address, size)
    for (const auto& a : r.allocations)
        if (a.live_at(moment)) live.emplace_back(a.address, a.size);
    std::sort(live.begin(), live.end());
    FreeSpace out;
    const auto& file = snap.source.path;
    const auto end_of = [&](std::int64_t address, std::int64_t size) {
        return util::or_refuse(util::checked_add(address, size), "an address and size", file);
    };
    // The caching allocator merges neighbouring free blocks, so a free block is a gap
    // between live ones inside a reserved range.
    for (const auto& range : reserved_at(snap, r, device, moment)) {
        const std::int64_t end = end_of(range.address, range.size);
        auto it = std::lower_bound(live.begin(), live.end(), std::make_pair(range.address, std::int64_t{0}));
        std::int64_t at = range.address;
        const auto gap = [&](std::int64_t to) {
            const std::int64_t size = to > at ? util::or_refuse(util::checked_sub(to, at), "a free block", file) : 0;
            out.total = util::or_refuse(util::checked_add(out.total, size), "the free bytes", file);
            out.largest = std::max(out.largest, size);
            if (range.stream == stream) out.largest_same_stream = std::max(out.largest_same_stream, size);
        };
        for (; it != live.end() && it->first < end; ++it) {
            gap(it->first);
            at = std::max(at, end_of(it->first, it->second));
        }
        gap(end);
    }
    return out;
}

void classify_oom(OomExplanation& oom, const std::string& file) {
    const std::int64_t request = oom.requested_bytes;
    const std::int64_t cache_free = std::max<std::int64_t>(
        0, util::or_refuse(util::checked_sub(oom.reserved_bytes, oom.allocated_bytes), "an OOM's free cache", file));
    auto& ev = oom.evidence;
    ev.push_back(Fact(FactKind::oom_request)
                     .bytes("requested", request)
                     .bytes("device_free", oom.device_free_bytes)
                     .bytes("allocated", oom.allocated_bytes)
                     .bytes("reserved", oom.reserved_bytes)
                     .bytes("cache_free", cache_free));
    // Counted back from the snapshot below 0: the trace does not match it (a crafted or
    // inconsistent file; never a real capture), and no level here can be read as the device's.
    const bool impossible = oom.allocated_bytes < 0 || oom.reserved_bytes < 0;
    if (impossible)
        ev.push_back(Fact(FactKind::oom_levels_impossible)
                         .bytes("allocated", oom.allocated_bytes)
                         .bytes("reserved", oom.reserved_bytes));
    ev.push_back(Fact(FactKind::oom_largest_free)
                     .bytes("largest", oom.largest_free_block_bytes)
                     .bytes("largest_same_stream", oom.largest_free_block_same_stream_bytes)
                     .count("stream", oom.stream));
    const std::int64_t held = util::or_refuse(util::checked_add(oom.reserved_bytes, oom.device_free_bytes),
                                              "an OOM's reserved and free device bytes", file);
    std::optional<Pattern> pattern;
    if (oom.device_memory_bytes && *oom.device_memory_bytes < held) {
        ev.push_back(
            Fact(FactKind::oom_capacity_too_small).bytes("capacity", *oom.device_memory_bytes).bytes("held", held));
        oom.device_memory_bytes.reset();
    }
    if (oom.device_memory_bytes) {
        const std::int64_t capacity = *oom.device_memory_bytes;
        const std::int64_t elsewhere =
            util::or_refuse(util::checked_sub(capacity, held), "an OOM's device memory held elsewhere", file);
        ev.push_back(Fact(FactKind::oom_capacity)
                         .bytes("capacity", capacity)
                         .bytes("other", std::max<std::int64_t>(0, elsewhere)));
        if (request > capacity)
            pattern = Pattern::single_huge_request;
        else if (elsewhere >= std::max(request, capacity / 10))
            pattern = Pattern::other_process;
    } else if (request > held && !impossible) {
        pattern = Pattern::single_huge_request;
        ev.push_back(Fact(FactKind::oom_larger_than_held).bytes("held", held));
    }
    if (!pattern)
        pattern = oom.largest_free_block_same_stream_bytes < request && oom.device_free_bytes < request &&
                          cache_free >= request
                      ? Pattern::fragmentation_oom
                      : Pattern::device_full;
    if (!oom.device_memory_bytes && *pattern != Pattern::single_huge_request)
        ev.push_back(Fact(FactKind::oom_capacity_unknown));
    oom.classification = *pattern;
}

}  // namespace memsnap::analysis::detail
