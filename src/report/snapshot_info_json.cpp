#include <memsnap/report/snapshot_info.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>

namespace memsnap::report {

namespace {

void add_totals(nlohmann::ordered_json& j, const analysis::MemoryTotals& t) {
    const nlohmann::ordered_json totals{{"segments", t.segments},
            {"blocks", t.blocks},
            {"reserved_bytes", t.reserved_bytes},
            {"allocated_bytes", t.allocated_bytes},
            {"active_bytes", t.active_bytes},
            {"inactive_bytes", t.inactive_bytes},
            {"requested_bytes", t.requested_bytes},
            {"internal_waste_bytes", t.internal_waste_bytes},
            {"external_fragmentation_bytes", t.external_fragmentation_bytes},
            {"releasable_bytes", t.releasable_bytes}};
    for (const auto& [key, value] : totals.items()) j[key] = value;
}

}  // namespace

std::string render_snapshot_info_json(const analysis::SnapshotSummary& s) {
    // Keys in reading order: identity, format, totals (as in expected.json), then details.
    nlohmann::ordered_json j;
    j["schema_version"] = 1;
    j["kind"] = "snapshot";
    // "file" is the file name, as in expected.json; "path" is what the user gave.
    j["file"] = std::filesystem::path(s.file).filename().string();
    j["path"] = s.file;
    j["format"] = {{"encoding", s.encoding},
                   {"writer", s.writer},
                   {"protocol", s.protocol},
                   {"generation", s.generation},
                   {"features", s.features}};
    add_totals(j, s.totals);
    nlohmann::ordered_json devices = nlohmann::ordered_json::array();
    nlohmann::ordered_json per_device = nlohmann::ordered_json::array();
    for (const auto& d : s.devices) {
        devices.push_back(d.device);
        nlohmann::ordered_json entry;
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
    j["trace_devices"] = s.trace_devices;
    j["trace_events_by_action"] = nlohmann::ordered_json::object();
    for (const auto& [name, n] : s.trace_events_by_action) j["trace_events_by_action"][name] = n;
    j["trace_time_span_us"] = nullptr;
    if (s.trace_first_us && s.trace_last_us)
        j["trace_time_span_us"] = {{"first", *s.trace_first_us},
                                   {"last", *s.trace_last_us},
                                   {"duration", *s.trace_last_us - *s.trace_first_us}};
    j["oom_events"] = s.oom_events;
    j["allocator_settings"] = nullptr;
    if (s.has_allocator_settings) {
        j["allocator_settings"] = nlohmann::ordered_json::object();
        for (const auto& [key, value] : s.allocator_settings)
            j["allocator_settings"][key] = nlohmann::ordered_json::parse(value, nullptr, false);
    }
    j["external_annotations"] = s.annotations;
    j["top_level_keys"] = s.top_level_keys;
    j["site_count"] = s.site_count;
    nlohmann::ordered_json sites = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& u = s.top_sites[i];
        sites.push_back(nlohmann::ordered_json{{"rank", i + 1},
                         {"frame",
                          nlohmann::ordered_json{{"filename", u.site.filename},
                                                 {"line", u.site.line},
                                                 {"name", u.site.name}}},
                         {"user_code", u.site.user_code},
                         {"bytes", u.bytes},
                         {"blocks", u.blocks}});
    }
    j["top_sites"] = sites;
    return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace memsnap::report
