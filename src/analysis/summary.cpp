#include <memsnap/analysis/summary.hpp>

#include <algorithm>
#include <set>

namespace memsnap::analysis {

using snapshot::BlockState;

MemoryTotals compute_totals(const snapshot::Snapshot& snap, int device) {
    MemoryTotals t;
    for (const auto& seg : snap.segments) {
        if (device >= 0 && seg.device != device) continue;
        ++t.segments;
        t.reserved_bytes += seg.total_size;
        const auto blocks = snap.blocks_of(seg);
        bool any_active = false;
        for (const auto& b : blocks) any_active |= b.active();
        for (const auto& b : blocks) {
            ++t.blocks;
            if (b.live()) {
                t.allocated_bytes += b.size;
                t.internal_waste_bytes += b.size - b.requested_size;
            }
            if (b.active()) {
                t.active_bytes += b.size;
                t.requested_bytes += b.requested_size;
            }
            if (b.state == BlockState::inactive) {
                t.inactive_bytes += b.size;
                if (any_active) t.external_fragmentation_bytes += b.size;
            }
        }
        if (blocks.size() == 1 && blocks[0].state == BlockState::inactive)
            t.releasable_bytes += blocks[0].size;
    }
    return t;
}

SnapshotSummary summarize(const snapshot::Snapshot& snap, const SiteRules& rules,
                          std::size_t top) {
    SnapshotSummary s;
    s.file = snap.source.path;
    s.encoding = snap.source.encoding;
    s.writer = snap.source.writer;
    s.generation = snap.source.generation;
    s.protocol = snap.source.protocol;
    s.features = snap.source.features;
    s.totals = compute_totals(snap);

    std::set<int> devices;
    for (const auto& seg : snap.segments) {
        devices.insert(seg.device);
        const auto type = snap.str(seg.segment_type);
        if (type == "large") ++s.large_segments;
        if (type == "small") ++s.small_segments;
        if (seg.is_expandable) ++s.expandable_segments;
        if (seg.pool_id[0] != 0 || seg.pool_id[1] != 0) ++s.private_pool_segments;
    }
    for (int d : devices) s.devices.push_back({d, compute_totals(snap, d)});

    const SiteClassifier classifier(snap, rules);
    std::map<SiteKey, SiteUsage> sites;
    for (const auto& b : snap.blocks) {
        ++s.blocks_by_state[std::string(snap.str(b.state_name))];
        if (b.stack != 0) ++s.blocks_with_frames;
        if (!b.live()) continue;
        auto key = classifier.site_of(b.stack);
        auto& usage = sites[key];
        usage.site = std::move(key);
        usage.bytes += b.size;
        ++usage.blocks;
    }
    s.site_count = static_cast<std::int64_t>(sites.size());
    for (auto& [key, usage] : sites) s.top_sites.push_back(std::move(usage));
    // Ties broken by the site itself so that output never depends on map or hash order.
    std::sort(s.top_sites.begin(), s.top_sites.end(), [](const SiteUsage& a, const SiteUsage& b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        return a.site < b.site;
    });
    if (top != 0 && s.top_sites.size() > top) s.top_sites.resize(top);  // 0: all

    s.trace_devices = snap.trace_devices;
    for (const auto& e : snap.events) {
        ++s.trace_events_by_action[std::string(snap.action_name(e))];
        if (e.action == snapshot::TraceAction::oom) ++s.oom_events;
        if (e.time_us >= 0) {
            s.trace_first_us = std::min(s.trace_first_us.value_or(e.time_us), e.time_us);
            s.trace_last_us = std::max(s.trace_last_us.value_or(e.time_us), e.time_us);
        }
    }
    s.allocator_settings = snap.allocator_settings;
    s.has_allocator_settings = snap.has_allocator_settings;
    s.annotations = static_cast<std::int64_t>(snap.annotations.size());
    s.top_level_keys = snap.top_level_keys;
    return s;
}

}  // namespace memsnap::analysis
