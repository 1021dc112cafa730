// JSON writer for the snapshot diff ("kind": "snapshot_diff").
#include "json_support.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

namespace {

using json::Json;

Json site_json(const analysis::SiteChange& s, const std::vector<analysis::FrameText>& table) {
    return {{"rank", s.rank},
            {"frame", json::site_frame(s.site)},
            {"user_code", s.site.user_code},
            {"compiled_graph", s.site.compiled_graph},
            {"category", analysis::to_string(s.category)},
            {"before_bytes", s.before_bytes},
            {"after_bytes", s.after_bytes},
            {"delta_bytes", s.delta_bytes},
            {"before_blocks", s.before_blocks},
            {"after_blocks", s.after_blocks},
            {"delta_blocks", s.delta_blocks},
            {"new_blocks", s.new_blocks},
            {"gone_blocks", s.gone_blocks},
            {"survivor_blocks", s.survivor_blocks},
            {"growth_bytes_per_step", json::number(s.growth_bytes_per_step)},
            {"share", json::optional_number(s.share)},
            {"verdict", analysis::to_string(s.verdict)},
            {"diagnosis", json::diagnosis(s.diagnosis)},
            {"stacks", json::stacks(s.stacks, table)}};
}

Json categories_json(const analysis::SnapshotDiff& d) {
    Json out = Json::object();
    for (const auto c : analysis::all_categories()) {
        const auto& cc = d.categories[static_cast<std::size_t>(c)];
        out[std::string(analysis::to_string(c))] = {{"before_bytes", cc.before_bytes},
                                                    {"after_bytes", cc.after_bytes},
                                                    {"delta_bytes", cc.delta_bytes()},
                                                    {"before_blocks", cc.before_blocks},
                                                    {"after_blocks", cc.after_blocks}};
    }
    return out;
}

}  // namespace

void snapshot_diff_json(const analysis::SnapshotDiff& d, const Sink& sink) {
    Json j = json::document("snapshot_diff");
    json::diff_header(j, d.before_file, d.after_file, d.steps, d.same_process);
    j["device"] = d.device ? Json(*d.device) : Json(nullptr);
    j["devices"] = {{"before", d.devices.before}, {"after", d.devices.after}};
    j["totals"] = Json::object();
    for (const auto& field : analysis::TotalsChange::fields()) {
        const auto& t = d.totals.*field.member;
        j["totals"][field.name] = {
            {"before", t.before}, {"after", t.after}, {"delta", t.delta}, {"per_step", json::number(t.per_step)}};
    }
    j["verdict"] = analysis::to_string(d.verdict.verdict);
    j["evidence"] = d.verdict.evidence;
    j["advice"] = d.verdict.advice;
    j["diagnosis"] = json::diagnosis(d.overall);
    j["categories"] = categories_json(d);
    j["stacks_recorded"] = d.stacks_recorded;
    Json blocks;
    blocks["live_before"] = d.live_blocks_before;
    blocks["live_after"] = d.live_blocks_after;
    blocks["survivors"] = d.survivors;
    blocks["new"] = d.new_blocks;
    blocks["gone"] = d.gone_blocks;
    j["blocks"] = std::move(blocks);
    j["pending_free_bytes"] = {{"before", d.pending_free_before}, {"after", d.pending_free_after}};
    j["convergence"] = nullptr;
    if (d.convergence) {
        const auto& c = *d.convergence;
        j["convergence"] = {{"frame", json::frame(c.frame)},
                            {"inclusive_bytes", c.inclusive_bytes},
                            {"exclusive_bytes", c.exclusive_bytes},
                            {"share", json::number(c.share)},
                            {"sites", c.sites}};
    }
    j["notes"] = d.notes;
    j["warnings"] = d.warnings;
    j["sites"] = Json::array();  // written one site at a time
    j["sites_total"] = d.sites_total;
    j["sites_not_listed"] = {{"beyond_top", d.sites_beyond_top},
                             {"below_min_growth", d.sites_below_min_growth},
                             {"delta_bytes", d.sites_not_listed_delta_bytes}};
    json::dump(
        j, "sites", d.sites.size(), [&](std::size_t i) { return site_json(d.sites[i], d.frame_table); }, sink);
}

}  // namespace memsnap::report::detail
