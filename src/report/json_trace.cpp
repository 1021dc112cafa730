// JSON writer for `trace` ("kind": "trace").
#include "json_support.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

using json::Json;

namespace {

Json time_or_null(std::int64_t us) { return us >= 0 ? Json(us) : Json(nullptr); }

}  // namespace

std::string trace_json(const analysis::TraceResult& t) {
    Json j = json::document("trace");
    j["file"] = t.file;
    j["generation"] = t.generation;
    j["device"] = t.device;
    j["devices"] = t.devices;
    j["source"] = t.source;
    j["events"] = t.events;
    j["time_first_us"] = time_or_null(t.time_first_us);
    j["time_last_us"] = time_or_null(t.time_last_us);
    j["iterations"] = t.iterations;
    j["iteration_source"] = t.iteration_source;
    j["iteration_starts"] = t.iteration_starts;
    j["snapshot_events"] = t.snapshot_events;
    j["truncated"] = t.truncated;
    j["truncation_evidence"] = t.truncation_evidence;
    j["disagreements"] = t.disagreements;
    const auto peak = json::usage(t.peak.usage);
    if (t.ordered())
        j["peak"] = {{"bytes", t.peak.bytes},
                     {"time_us", time_or_null(t.peak.time_us)},
                     {"event", t.peak.event},
                     {"categories", peak.at("categories")},
                     {"sites", peak.at("sites")}};
    else
        j["peak"] = nullptr;  // block history says nothing of when
    Json ooms = Json::array();
    for (const auto& o : t.ooms) ooms.push_back(json::oom(o, t.frame_table));
    j["ooms"] = std::move(ooms);
    j["ooms_total"] = t.ooms_total;
    Json sites = Json::array();
    for (const auto& s : t.sites)
        sites.push_back({{"rank", s.rank},
                         {"frame", json::site_frame(s.site)},
                         {"user_code", s.site.user_code},
                         {"category", analysis::to_string(s.category)},
                         {"live_allocations", s.live_allocations},
                         {"live_bytes", s.live_bytes},
                         {"per_iteration", s.per_iteration},
                         {"per_iteration_first", s.per_iteration_first},
                         {"warmup_allocations", s.warmup_allocations},
                         {"current_allocations", s.current_allocations},
                         {"verdict", s.verdict},
                         {"leak_allocations_per_iteration", s.leak_allocations_per_iteration},
                         {"leak_bytes_per_iteration", s.leak_bytes_per_iteration},
                         {"stacks", json::stacks(s.stacks, t.frame_table)}});
    j["sites"] = std::move(sites);
    j["sites_total"] = t.sites_total;
    Json timeline = Json::array();
    for (const auto& p : t.timeline)
        timeline.push_back({{"event", p.event},
                            {"time_us", time_or_null(p.time_us)},
                            {"allocated_bytes", p.allocated},
                            {"reserved_bytes", p.reserved}});
    j["timeline"] = std::move(timeline);
    j["allocated_by_iteration"] = t.allocated_by_iteration;
    j["notes"] = t.notes;
    return json::dump(j);
}

}  // namespace memsnap::report::detail
