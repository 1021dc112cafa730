#include "trace_oom.hpp"

#include <memsnap/analysis/judge/advice.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::analysis::detail {

FreeSpace free_space_at(const snapshot::Snapshot& snap, const Replay& r, int device, std::size_t moment,
                        std::int64_t stream) {
    std::vector<std::pair<std::int64_t, std::int64_t>> live;  // (address, size)
    for (const auto& a : r.allocations)
        if (a.live_at(moment)) live.emplace_back(a.address, a.size);
    std::sort(live.begin(), live.end());
    FreeSpace out;
    // The caching allocator merges neighbouring free blocks, so a free block is a gap
    // between live ones inside a reserved range.
    for (const auto& range : reserved_at(snap, r, device, moment)) {
        const std::int64_t end = range.address + range.size;
        auto it = std::lower_bound(live.begin(), live.end(), std::make_pair(range.address, std::int64_t{0}));
        std::int64_t at = range.address;
        const auto gap = [&](std::int64_t to) {
            const std::int64_t size = std::max<std::int64_t>(0, to - at);
            out.total += size;
            out.largest = std::max(out.largest, size);
            if (range.stream == stream) out.largest_same_stream = std::max(out.largest_same_stream, size);
        };
        for (; it != live.end() && it->first < end; ++it) {
            gap(it->first);
            at = std::max(at, it->first + it->second);
        }
        gap(end);
    }
    return out;
}

void classify_oom(OomExplanation& oom) {
    const std::int64_t request = oom.requested_bytes;
    const std::int64_t cache_free = std::max<std::int64_t>(0, oom.reserved_bytes - oom.allocated_bytes);
    const auto bytes = [](std::int64_t b) { return util::human_bytes(b); };
    auto& ev = oom.evidence;
    ev.push_back(
        fmt::format("requested {}; the device had {} free; this process held {} allocated and {} reserved, so "
                    "{} free in its cache",
                    bytes(request), bytes(oom.device_free_bytes), bytes(oom.allocated_bytes), bytes(oom.reserved_bytes),
                    bytes(cache_free)));
    ev.push_back(fmt::format("the largest free block in the cache was {} ({} on the request's stream {})",
                             bytes(oom.largest_free_block_bytes), bytes(oom.largest_free_block_same_stream_bytes),
                             oom.stream));
    const std::int64_t held = oom.reserved_bytes + oom.device_free_bytes;
    if (oom.device_memory_bytes) {
        const std::int64_t capacity = *oom.device_memory_bytes;
        const std::int64_t elsewhere = capacity - held;
        ev.push_back(
            fmt::format("the device holds {} (--device-memory): {} was neither in this process's cache nor free",
                        bytes(capacity), bytes(std::max<std::int64_t>(0, elsewhere))));
        if (request > capacity)
            oom.classification = "single_huge_request";
        else if (elsewhere >= std::max(request, capacity / 10))
            oom.classification = "other_process";
    } else if (request > held) {
        oom.classification = "single_huge_request";
        ev.push_back(
            fmt::format("the request is larger than this process's cache and the free memory together ({}); "
                        "another process holding memory would look the same: give --device-memory to tell",
                        bytes(held)));
    }
    if (oom.classification.empty()) {
        if (oom.largest_free_block_same_stream_bytes < request && oom.device_free_bytes < request &&
            cache_free >= request)
            oom.classification = "fragmentation";
        else
            oom.classification = "device_full";
    }
    if (!oom.device_memory_bytes && oom.classification != "single_huge_request")
        ev.push_back(
            "whether another process held memory on the device cannot be told without its capacity "
            "(--device-memory)");
    const auto& text =
        advice::pattern(oom.classification == "fragmentation" ? "fragmentation_oom" : oom.classification);
    ev.insert(ev.begin(), std::string(text.summary));
    oom.advice.push_back(std::string(text.fix));
}

}  // namespace memsnap::analysis::detail
