// JSON writers for snapshots: `info` ("kind": "snapshot") and `diff` ("kind": "snapshot_diff").
#include "json_support.hpp"
#include "writers.hpp"

#include <filesystem>

namespace memsnap::report::detail {

namespace {

using json::Json;

void add_totals(Json& j, const analysis::MemoryTotals& t) {
    j["segments"] = t.segments;
    j["blocks"] = t.blocks;
    j["reserved_bytes"] = t.reserved_bytes;
    j["allocated_bytes"] = t.allocated_bytes;
    j["active_bytes"] = t.active_bytes;
    j["inactive_bytes"] = t.inactive_bytes;
    j["requested_bytes"] = t.requested_bytes;
    j["internal_waste_bytes"] = t.internal_waste_bytes;
    j["inactive_split_bytes"] = t.inactive_split_bytes;
    j["external_fragmentation_bytes"] = t.inactive_split_bytes;  // the same figure, by its earlier name
    j["releasable_bytes"] = t.releasable_bytes;
}

Json info_trace(const analysis::SnapshotInfo& s) {
    Json j = Json::object();
    j["trace_devices"] = s.trace_devices;
    j["trace_events_by_action"] = Json::object();
    for (const auto& [name, n] : s.trace_events_by_action) j["trace_events_by_action"][name] = n;
    j["trace_events_with_stack"] = s.trace_events_with_stack;
    j["trace_time_span_us"] = nullptr;
    if (s.trace_first_us && s.trace_last_us)
        j["trace_time_span_us"] = {{"first", *s.trace_first_us},
                                   {"last", *s.trace_last_us},
                                   {"duration", *s.trace_last_us - *s.trace_first_us}};
    j["oom_events"] = s.oom_events;
    return j;
}

Json info_sites(const analysis::SnapshotInfo& s) {
    Json sites = Json::array();
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& u = s.top_sites[i];
        sites.push_back(Json{{"rank", i + 1},
                             {"frame", json::site_frame(u.site)},
                             {"user_code", u.site.user_code},
                             {"compiled_graph", u.site.compiled_graph},
                             {"category", analysis::to_string(u.category)},
                             {"bytes", u.bytes},
                             {"blocks", u.blocks}});
    }
    return sites;
}

}  // namespace

std::string snapshot_info_json(const analysis::SnapshotInfo& s) {
    // Keys in reading order: identity, format, totals (as in expected.json), then details.
    Json j = json::document("snapshot");
    // "file" is the file name, as in expected.json; "path" is what the user gave.
    j["file"] = std::filesystem::path(s.file).filename().string();
    j["path"] = s.file;
    j["format"] = {{"encoding", s.encoding},
                   {"writer", s.writer},
                   {"protocol", s.protocol},
                   {"generation", s.generation},
                   {"features", s.features}};
    j["device"] = s.device ? Json(*s.device) : Json(nullptr);
    add_totals(j, s.totals);
    Json devices = Json::array(), per_device = Json::array();
    for (const auto& d : s.devices) {
        devices.push_back(d.device);
        Json entry;
        entry["device"] = d.device;
        add_totals(entry, d.totals);
        per_device.push_back(entry);
    }
    j["devices"] = devices;
    j["per_device"] = per_device;
    j["blocks_by_state"] = s.blocks_by_state;
    j["blocks_with_frames"] = s.blocks_with_frames;
    j["segments_by_type"] = {{"large", s.large_segments},
                             {"small", s.small_segments},
                             {"expandable", s.expandable_segments},
                             {"private_pool", s.private_pool_segments}};
    const Json trace = info_trace(s);  // kept: items() refers into it
    for (const auto& [key, value] : trace.items()) j[key] = value;
    j["allocator_settings"] = nullptr;
    if (s.has_allocator_settings) {
        j["allocator_settings"] = Json::object();
        for (const auto& [key, value] : s.allocator_settings)
            j["allocator_settings"][key] = Json::parse(value, nullptr, false);
    }
    j["external_annotations"] = s.annotations;
    j["top_level_keys"] = s.top_level_keys;
    j["categories"] = Json::object();
    for (const auto c : analysis::all_categories()) {
        const auto& u = s.categories[static_cast<std::size_t>(c)];
        j["categories"][std::string(analysis::to_string(c))] = {{"bytes", u.bytes}, {"blocks", u.blocks}};
    }
    j["warnings"] = s.warnings;
    j["largest_free_block_bytes"] = s.largest_free_block_bytes;
    Json pools = Json::array();
    for (const auto& p : s.pools)
        pools.push_back({{"device", p.device},
                         {"stream", p.stream},
                         {"pool_id", {p.pool_id[0], p.pool_id[1]}},
                         {"private", p.is_private()},
                         {"segments", p.segments},
                         {"expandable_segments", p.expandable_segments},
                         {"reserved_bytes", p.reserved_bytes},
                         {"allocated_bytes", p.allocated_bytes},
                         {"free_bytes", p.free_bytes},
                         {"largest_free_block_bytes", p.largest_free_block_bytes}});
    j["pools"] = std::move(pools);
    Json ooms = Json::array();
    for (const auto& o : s.ooms.ooms) ooms.push_back(json::oom(o, s.ooms.frame_table));
    j["ooms"] = std::move(ooms);
    j["ooms_total"] = s.ooms.ooms_total;
    j["site_count"] = s.site_count;
    j["top_sites"] = info_sites(s);
    return json::dump(j);
}

}  // namespace memsnap::report::detail
