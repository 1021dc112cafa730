// JSON writers for memory_summary / memory_stats captures: `info` and `diff`
// ("kind": "summary_diff"). Keys are memory_stats names, so summaries and stats compare.
#include "json_support.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

namespace {

using json::Json;

Json device_json(const analysis::DeviceDiff& d) {
    Json metrics = Json::object();
    for (const auto& [key, m] : d.metrics)
        metrics[key] = {{"before", json::range(m.before)},
                        {"after", json::range(m.after)},
                        {"delta", json::range(m.delta)},
                        {"per_step", json::optional_range(m.per_step)}};
    Json series = Json::array();
    for (const auto& p : d.series) {
        Json values = Json::object();
        for (const auto& [key, trend] : d.trends) values[key] = json::range(trend.values[p.index]);
        series.push_back({{"index", p.index},
                          {"source", p.source},
                          {"line", p.line},
                          {"step", p.step ? Json(*p.step) : Json(nullptr)},
                          {"values", std::move(values)}});
    }
    Json trends = Json::object();
    for (const auto& [key, t] : d.trends)
        trends[key] = {{"first_to_last", json::range(t.first_to_last)},
                       {"direction", t.direction},
                       {"monotone", t.monotone},
                       {"slope", json::range(t.slope)},
                       {"slope_unit", t.slope_unit}};
    return {{"device", d.device ? Json(*d.device) : Json(nullptr)},
            {"verdict", analysis::to_string(d.verdict.verdict)},
            {"evidence", d.verdict.evidence},
            {"advice", d.verdict.advice},
            {"metrics", std::move(metrics)},
            {"series", std::move(series)},
            {"trends", std::move(trends)},
            {"missing", d.missing},
            {"notes", d.notes}};
}

}  // namespace

std::string stats_diff_json(const analysis::StatsDiff& diff) {
    Json doc = json::document("summary_diff");
    json::diff_header(doc, diff.before_file, diff.after_file, diff.steps, diff.same_process);
    doc["before_kind"] = stats::to_string(diff.before_kind);
    doc["after_kind"] = stats::to_string(diff.after_kind);
    doc["device_sets"] = {{"before", diff.device_sets.before}, {"after", diff.device_sets.after}};
    // The primary device at the top level, so that one-device captures read simply.
    const Json primary = device_json(diff.primary());  // kept: items() refers into it
    for (const auto& [key, value] : primary.items()) doc[key] = value;
    doc["warnings"] = diff.warnings;
    Json devices = Json::array();
    for (const auto& d : diff.devices) devices.push_back(device_json(d));
    doc["devices"] = std::move(devices);
    return json::dump(doc);
}

std::string stats_info_json(const analysis::StatsInfo& info) {
    Json tables = Json::array();
    for (const auto& t : info.capture.tables) {
        Json stats = Json::object();
        for (const auto& [key, value] : t.stats) stats[key] = json::range(value);
        tables.push_back({
            {"device", t.device ? Json(*t.device) : Json(nullptr)},
            {"line", t.line},
            {"layout", t.layout},
            {"num_ooms", json::optional_range(t.num_ooms)},
            {"num_alloc_retries", json::optional_range(t.num_alloc_retries)},
            {"stats", std::move(stats)},
            {"warnings", t.warnings},
        });
    }
    Json doc = json::document(stats::to_string(info.capture.kind));
    doc["path"] = info.capture.file;
    doc["device"] = info.device ? Json(*info.device) : Json(nullptr);
    doc["tables"] = std::move(tables);
    doc["tables_total"] = info.tables_total();
    doc["tables_not_listed"] = info.omitted;
    return json::dump(doc);
}

}  // namespace memsnap::report::detail
