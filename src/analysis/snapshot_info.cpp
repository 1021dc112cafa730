#include <memsnap/analysis/snapshot_info.hpp>
#include <memsnap/analysis/group_sites.hpp>
#include <memsnap/analysis/match_blocks.hpp>
#include <memsnap/analysis/stack_index.hpp>

#include <algorithm>

namespace memsnap::analysis {

namespace {

void describe_segments(const snapshot::Snapshot& snap, std::optional<int> device, SnapshotInfo& s) {
    for (const auto& seg : snap.segments) {
        if (device && seg.device != *device) continue;
        const auto type = snap.str(seg.segment_type);
        if (type == "large") ++s.large_segments;
        if (type == "small") ++s.small_segments;
        if (seg.is_expandable) ++s.expandable_segments;
        if (seg.pool_id[0] != 0 || seg.pool_id[1] != 0) ++s.private_pool_segments;
        for (const auto& b : snap.blocks_of(seg)) {
            ++s.blocks_by_state[std::string(snap.str(b.state_name))];
            if (b.stack != snapshot::no_stack) ++s.blocks_with_frames;
        }
    }
    for (int d : devices_of(snap))
        if (!device || d == *device) s.devices.push_back({d, compute_totals(snap, d)});
}

void describe_trace(const snapshot::Snapshot& snap, std::optional<int> device, SnapshotInfo& s) {
    s.trace_devices = snap.trace_devices;
    for (const auto& e : snap.events) {
        if (device && e.device != *device) continue;
        ++s.trace_events_by_action[std::string(snap.action_name(e))];
        if (e.stack != snapshot::no_stack) ++s.trace_events_with_stack;
        if (e.action == snapshot::TraceAction::oom) ++s.oom_events;
        if (e.time_us >= 0) {
            s.trace_first_us = std::min(s.trace_first_us.value_or(e.time_us), e.time_us);
            s.trace_last_us = std::max(s.trace_last_us.value_or(e.time_us), e.time_us);
        }
    }
}

void describe_sites(const snapshot::Snapshot& snap, const AnalysisOptions& options, SnapshotInfo& s) {
    StackIndex index({&snap}, options.rules, {});
    const auto blocks = collect_blocks(snap, 0, index, options.device);
    std::map<SiteKey, SiteUsage> sites;
    for (const auto& b : blocks.live) {
        const auto category = b.category;
        auto& c = s.categories[static_cast<std::size_t>(category)];
        c.bytes += b.size;
        ++c.blocks;
        const auto key = site_key(index, {b.stack, b.size, category}, blocks.any_recorded);
        auto& u = sites[key];
        u.site = key;
        u.category = category;
        u.bytes += b.size;
        ++u.blocks;
    }
    s.site_count = static_cast<std::int64_t>(sites.size());
    for (auto& [key, u] : sites) s.top_sites.push_back(std::move(u));
    // Ties broken by the site itself so that output never depends on map or hash order.
    std::sort(s.top_sites.begin(), s.top_sites.end(), [](const SiteUsage& a, const SiteUsage& b) {
        if (a.bytes != b.bytes) return a.bytes > b.bytes;
        return a.site < b.site;
    });
    if (options.top != 0 && s.top_sites.size() > options.top) s.top_sites.resize(options.top);
}

}  // namespace

SnapshotInfo describe_snapshot(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    require_device(snap, options.device);
    SnapshotInfo s;
    s.file = snap.source.path;
    s.encoding = snap.source.encoding;
    s.writer = snap.source.writer;
    s.generation = snap.source.generation;
    s.protocol = snap.source.protocol;
    s.features = snap.source.features;
    s.device = options.device;
    s.totals = compute_totals(snap, options.device);
    describe_segments(snap, options.device, s);
    describe_trace(snap, options.device, s);
    describe_sites(snap, options, s);
    s.allocator_settings = snap.allocator_settings;
    s.has_allocator_settings = snap.has_allocator_settings;
    s.annotations = static_cast<std::int64_t>(snap.annotations.size());
    s.top_level_keys = snap.top_level_keys;
    s.warnings = snap.warnings;
    return s;
}

}  // namespace memsnap::analysis
