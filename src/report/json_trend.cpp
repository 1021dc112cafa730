// JSON writers for `trend` ("kind": "trend") and `ranks` ("kind": "ranks").
#include "json_support.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

using json::Json;

namespace {

// The fit's keys, added to `out`.
void add_fit(Json& out, const analysis::SeriesFit& f) {
    out["slope_bytes_per_step"] = json::number(f.slope_bytes_per_step);
    out["r2"] = json::number(f.r2);
    out["monotonic_share"] = json::number(f.monotonic_share);
    out["first_step"] = f.first_step ? Json(*f.first_step) : Json(nullptr);
    out["verdict"] = f.verdict;
}

Json series(const std::vector<analysis::TrendSeries>& all) {
    Json out = Json::object();
    for (const auto& s : all) {
        Json one = Json::object();
        add_fit(one, s.fit);
        one["bytes_by_step"] = s.bytes;
        if (!s.blocks.empty()) one["blocks_by_step"] = s.blocks;
        out[s.name] = std::move(one);
    }
    return out;
}

Json categories(const std::array<analysis::CategoryUsage, analysis::category_count>& usage) {
    Json out = Json::object();
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (usage[k].blocks != 0)
            out[std::string(analysis::to_string(static_cast<analysis::Category>(k)))] = {{"bytes", usage[k].bytes},
                                                                                         {"blocks", usage[k].blocks}};
    return out;
}

}  // namespace

std::string trend_json(const analysis::TrendResult& t) {
    Json j = json::document("trend");
    j["input_kind"] = t.kind;
    j["files"] = t.files;
    j["steps"] = t.steps;
    j["steps_source"] = t.steps_source;
    j["steps_known"] = t.steps_known;
    j["warmup"] = t.warmup;
    j["device"] = t.device ? Json(*t.device) : Json(nullptr);
    j["verdict"] = t.verdict;
    j["evidence"] = t.evidence;
    j["totals"] = series(t.totals);
    j["categories"] = series(t.categories);
    Json sites = Json::array();
    for (const auto& s : t.sites) {
        Json one = {{"rank", s.rank},
                    {"frame", json::site_frame(s.site)},
                    {"user_code", s.site.user_code},
                    {"category", analysis::to_string(s.category)}};
        add_fit(one, s.fit);
        one["bytes_by_step"] = s.bytes_by_step;
        one["blocks_by_step"] = s.blocks_by_step;
        one["diagnosis"] = json::diagnosis(s.diagnosis);
        sites.push_back(std::move(one));
    }
    j["sites"] = std::move(sites);
    j["sites_total"] = t.sites_total;
    j["notes"] = t.notes;
    j["warnings"] = t.warnings;
    return json::dump(j);
}

std::string ranks_json(const analysis::RanksResult& r) {
    Json j = json::document("ranks");
    j["rank_source"] = r.rank_source;
    Json ranks = Json::array();
    for (const auto& k : r.ranks) {
        Json top = Json::array();
        for (const auto& s : k.top_sites)
            top.push_back({{"frame", json::site_frame(s.site)},
                           {"user_code", s.site.user_code},
                           {"category", analysis::to_string(s.category)},
                           {"bytes", s.bytes},
                           {"blocks", s.blocks}});
        ranks.push_back({{"rank", k.rank},
                         {"file", k.file},
                         {"totals",
                          {{"allocated_bytes", k.totals.allocated_bytes},
                           {"reserved_bytes", k.totals.reserved_bytes},
                           {"active_bytes", k.totals.active_bytes},
                           {"inactive_split_bytes", k.totals.inactive_split_bytes}}},
                         {"categories", categories(k.categories)},
                         {"top_sites", std::move(top)}});
    }
    j["ranks"] = std::move(ranks);
    Json median_categories = Json::object();
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (r.median.category_bytes[k] != 0)
            median_categories[std::string(analysis::to_string(static_cast<analysis::Category>(k)))] =
                r.median.category_bytes[k];
    j["median"] = {{"allocated_bytes", r.median.allocated_bytes},
                   {"reserved_bytes", r.median.reserved_bytes},
                   {"active_bytes", r.median.active_bytes},
                   {"inactive_split_bytes", r.median.inactive_split_bytes},
                   {"categories", std::move(median_categories)}};
    j["noise_bytes"] = r.noise_bytes;
    Json outliers = Json::array();
    for (const auto& o : r.outliers) {
        Json sites = Json::array();
        for (const auto& s : o.sites)
            sites.push_back({{"frame", json::site_frame(s.site)},
                             {"category", analysis::to_string(s.category)},
                             {"bytes", s.bytes},
                             {"median_bytes", s.median_bytes},
                             {"delta_bytes", s.delta_bytes}});
        Json cats = Json::object();
        for (const auto& [category, delta] : o.categories) cats[std::string(analysis::to_string(category))] = delta;
        outliers.push_back({{"rank", o.rank},
                            {"file", o.file},
                            {"allocated_bytes", o.allocated_bytes},
                            {"delta_bytes", o.delta_bytes},
                            {"categories", std::move(cats)},
                            {"sites", std::move(sites)}});
    }
    j["outliers"] = std::move(outliers);
    j["notes"] = r.notes;
    j["warnings"] = r.warnings;
    return json::dump(j);
}

}  // namespace memsnap::report::detail
