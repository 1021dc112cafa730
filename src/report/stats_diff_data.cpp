// JSON and CSV writers for the summary/stats diff, and the format dispatch.
#include <memsnap/report/stats_diff.hpp>

#include <memsnap/error.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace memsnap::report {

namespace {

nlohmann::json range_json(ByteRange r) { return {{"low", r.low}, {"high", r.high}}; }

nlohmann::json device_json(const analysis::DeviceDiff& d) {
    nlohmann::json metrics = nlohmann::json::object();
    for (const auto& [key, m] : d.metrics)
        metrics[key] = {{"before", range_json(m.before)},
                        {"after", range_json(m.after)},
                        {"delta", range_json(m.delta)},
                        {"per_step", m.per_step ? range_json(*m.per_step) : nlohmann::json(nullptr)}};
    nlohmann::json series = nlohmann::json::array();
    for (const auto& p : d.series) {
        nlohmann::json values = nlohmann::json::object();
        for (const auto& [key, trend] : d.trends) values[key] = range_json(trend.values[p.index]);
        series.push_back({{"index", p.index},
                          {"source", p.source},
                          {"line", p.line},
                          {"step", p.step ? nlohmann::json(*p.step) : nlohmann::json(nullptr)},
                          {"values", std::move(values)}});
    }
    nlohmann::json trends = nlohmann::json::object();
    for (const auto& [key, t] : d.trends)
        trends[key] = {{"first_to_last", range_json(t.first_to_last)},
                       {"direction", t.direction},
                       {"monotone", t.monotone},
                       {"slope", range_json(t.slope)},
                       {"slope_unit", t.slope_unit}};
    return {{"device", d.device ? nlohmann::json(*d.device) : nlohmann::json(nullptr)},
            {"verdict", std::string(analysis::to_string(d.verdict.verdict))},
            {"evidence", d.verdict.evidence},
            {"advice", d.verdict.advice},
            {"metrics", std::move(metrics)},
            {"series", std::move(series)},
            {"trends", std::move(trends)},
            {"notes", d.notes}};
}

}  // namespace

std::string render_stats_diff_json(const analysis::StatsDiff& diff) {
    nlohmann::json doc = device_json(diff.primary());
    doc["schema_version"] = 1;
    doc["kind"] = "summary_diff";
    doc["before_kind"] = std::string(stats::to_string(diff.before_kind));
    doc["after_kind"] = std::string(stats::to_string(diff.after_kind));
    doc["steps"] = diff.steps ? nlohmann::json::array({diff.steps->first, diff.steps->second}) : nlohmann::json(nullptr);
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : diff.devices) devices.push_back(device_json(d));
    doc["devices"] = std::move(devices);
    return doc.dump(2) + "\n";
}

std::string render_stats_diff_csv(const analysis::StatsDiff& diff) {
    std::string out =
        "device,metric,before_low,before_high,after_low,after_high,delta_low,delta_high,per_step_low,per_step_high\n";
    for (const auto& d : diff.devices) {
        const auto device = d.device ? fmt::format("{}", *d.device) : std::string();
        for (const auto& [key, m] : d.metrics) {
            // Keys are memory_stats names ([a-z0-9_.]), so no CSV quoting is needed.
            out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", device, key, m.before.low, m.before.high,
                               m.after.low, m.after.high, m.delta.low, m.delta.high,
                               m.per_step ? fmt::format("{}", m.per_step->low) : std::string(),
                               m.per_step ? fmt::format("{}", m.per_step->high) : std::string());
        }
    }
    return out;
}

std::string render_stats_diff(const analysis::StatsDiff& diff, std::string_view format) {
    if (format == "text") return render_stats_diff_text(diff);
    if (format == "json") return render_stats_diff_json(diff);
    if (format == "markdown") return render_stats_diff_markdown(diff);
    if (format == "csv") return render_stats_diff_csv(diff);
    throw usage_error(fmt::format("unknown format '{}' (text, json, markdown, csv)", format));
}

}  // namespace memsnap::report
