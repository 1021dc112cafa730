#include <memsnap/report/snapshot_info.hpp>

#include <nlohmann/json.hpp>

namespace memsnap::report {

namespace {

nlohmann::json totals_json(const analysis::MemoryTotals& t) {
    return {{"segments", t.segments},
            {"blocks", t.blocks},
            {"reserved_bytes", t.reserved_bytes},
            {"allocated_bytes", t.allocated_bytes},
            {"active_bytes", t.active_bytes},
            {"inactive_bytes", t.inactive_bytes},
            {"requested_bytes", t.requested_bytes},
            {"internal_waste_bytes", t.internal_waste_bytes},
            {"external_fragmentation_bytes", t.external_fragmentation_bytes},
            {"releasable_bytes", t.releasable_bytes}};
}

}  // namespace

std::string render_snapshot_info_json(const analysis::SnapshotSummary& s) {
    nlohmann::json j = totals_json(s.totals);  // top-level totals, as in expected.json
    j["schema_version"] = 1;
    j["kind"] = "snapshot";
    j["file"] = s.file;
    j["format"] = {{"encoding", s.encoding},
                   {"writer", s.writer},
                   {"protocol", s.protocol},
                   {"generation", s.generation},
                   {"features", s.features}};
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json per_device = nlohmann::json::array();
    for (const auto& d : s.devices) {
        devices.push_back(d.device);
        auto entry = totals_json(d.totals);
        entry["device"] = d.device;
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
    j["trace_devices"] = s.trace_devices;
    j["trace_events_by_action"] = nlohmann::json::object();
    for (const auto& [name, n] : s.trace_events_by_action) j["trace_events_by_action"][name] = n;
    j["trace_time_span_us"] = nullptr;
    if (s.trace_first_us && s.trace_last_us)
        j["trace_time_span_us"] = {{"first", *s.trace_first_us},
                                   {"last", *s.trace_last_us},
                                   {"duration", *s.trace_last_us - *s.trace_first_us}};
    j["oom_events"] = s.oom_events;
    j["allocator_settings"] = nullptr;
    if (s.has_allocator_settings) {
        j["allocator_settings"] = nlohmann::json::object();
        for (const auto& [key, value] : s.allocator_settings)
            j["allocator_settings"][key] = nlohmann::json::parse(value, nullptr, false);
    }
    j["external_annotations"] = s.annotations;
    j["top_level_keys"] = s.top_level_keys;
    j["site_count"] = s.site_count;
    nlohmann::json sites = nlohmann::json::array();
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& u = s.top_sites[i];
        sites.push_back({{"rank", i + 1},
                         {"frame",
                          {{"filename", u.site.filename}, {"line", u.site.line}, {"name", u.site.name}}},
                         {"user_code", u.site.user_code},
                         {"bytes", u.bytes},
                         {"blocks", u.blocks}});
    }
    j["top_sites"] = sites;
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace memsnap::report
