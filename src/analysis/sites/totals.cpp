#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <vector>

namespace memsnap::analysis {

using snapshot::BlockState;

namespace {

// Expandable segments map their memory in pages: 2 MiB in the small pool, 20 MiB in the large.
std::int64_t page_size(const snapshot::Snapshot& snap, const snapshot::Segment& seg) {
    return snap.str(seg.segment_type) == "small" ? std::int64_t{2} << 20 : std::int64_t{20} << 20;
}

// The whole pages of a free block of an expandable segment (pages start at the segment).
std::int64_t whole_pages(std::int64_t segment, std::int64_t address, std::int64_t size, std::int64_t page) {
    const std::int64_t first = segment + ((address - segment + page - 1) / page) * page;
    const std::int64_t end = segment + ((address + size - segment) / page) * page;
    return std::max<std::int64_t>(0, end - first);
}

void add_segment(const snapshot::Snapshot& snap, const snapshot::Segment& seg, MemoryTotals& t) {
    if (!seg.placeholder) {  // not recorded: no reserved memory
        ++t.segments;
        t.reserved_bytes += seg.total_size;
    }
    const auto blocks = snap.blocks_of(seg);
    bool any_active = false;
    for (const auto& b : blocks) any_active |= b.active();
    const std::int64_t page = seg.is_expandable ? page_size(snap, seg) : 0;
    std::int64_t free_bytes = 0;
    for (const auto& b : blocks) {
        ++t.blocks;
        if (b.live()) {
            ++t.live_blocks;
            t.allocated_bytes += b.size;
            t.internal_waste_bytes += b.size - b.requested_size;
            t.requested_bytes += b.requested_size;
        }
        if (b.active()) t.active_bytes += b.size;
        if (b.state == BlockState::active_pending_free) t.pending_free_bytes += b.size;
        if (b.state == BlockState::inactive) {
            t.inactive_bytes += b.size;
            free_bytes += b.size;
            if (any_active) t.inactive_split_bytes += b.size;
            if (page > 0 && any_active) t.releasable_bytes += whole_pages(seg.address, b.address, b.size, page);
        }
    }
    if (!any_active) t.releasable_bytes += free_bytes;  // a whole free segment
    t.non_releasable_bytes = t.inactive_bytes - t.releasable_bytes;
}

}  // namespace

MemoryTotals compute_totals(const snapshot::Snapshot& snap, std::optional<int> device) {
    MemoryTotals t;
    for (const auto& seg : snap.segments)
        if (!device || seg.device == *device) add_segment(snap, seg, t);
    return t;
}

std::map<int, MemoryTotals> totals_by_device(const snapshot::Snapshot& snap) {
    std::map<int, MemoryTotals> out;
    for (const auto& seg : snap.segments) add_segment(snap, seg, out[seg.device]);
    return out;
}

std::set<int> devices_of(const snapshot::Snapshot& snap) {
    std::set<int> out;
    for (const auto& seg : snap.segments) out.insert(seg.device);
    return out;
}

void require_device(const snapshot::Snapshot& snap, std::optional<int> device) {
    if (!device) return;
    const auto devices = devices_of(snap);
    if (devices.count(*device)) return;
    if (devices.empty())
        throw input_error(fmt::format("--device {}: the capture holds no segment at all", *device), snap.source.path);
    // A crafted capture may hold thousands of devices: name a few.
    const std::vector<int> named(
        devices.begin(),
        std::next(devices.begin(), std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(devices.size()), 16)));
    // A device the trace lists with no event (torch writes one list per visible device).
    const bool listed = *device >= 0 && static_cast<std::size_t>(*device) < snap.trace_devices;
    const bool empty_trace = listed && std::none_of(snap.events.begin(), snap.events.end(),
                                                    [&](const auto& e) { return e.device == *device; });
    throw input_error(
        fmt::format("--device {}: no segment is on it{}; the capture's segments are on device{} {}{} only", *device,
                    empty_trace ? " and its device trace is empty" : "", devices.size() == 1 ? "" : "s",
                    fmt::join(named, ", "),
                    devices.size() > named.size() ? fmt::format(" … ({} devices)", devices.size()) : ""),
        snap.source.path);
}

}  // namespace memsnap::analysis
