// `info --format jsonl`: one flat, self-describing record per line (total, category, site),
// each naming its file, rank, step and device, for DuckDB's read_json_auto or Spark.
#include "json_support.hpp"
#include "writers.hpp"

namespace memsnap::report::detail {

using json::Json;

namespace {

Json optional_int(const std::optional<std::int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

// The fields every record starts with.
Json record(std::string_view kind, const JsonlContext& c, const std::optional<std::int64_t>& step,
            const std::optional<int>& device) {
    return {{"record", kind},
            {"file", c.file},
            {"rank", optional_int(c.rank)},
            {"step", optional_int(step)},
            {"device", device ? Json(*device) : Json(nullptr)}};
}

void line(std::string& out, const Json& j) {
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
    out += '\n';
}

}  // namespace

std::string info_jsonl(const analysis::InfoResult& info, const JsonlContext& c) {
    std::string out;
    if (const auto* s = std::get_if<analysis::SnapshotInfo>(&info)) {
        const std::pair<const char*, std::int64_t> totals[] = {{"allocated_bytes", s->totals.allocated_bytes},
                                                               {"reserved_bytes", s->totals.reserved_bytes},
                                                               {"active_bytes", s->totals.active_bytes},
                                                               {"requested_bytes", s->totals.requested_bytes},
                                                               {"inactive_split_bytes", s->totals.inactive_split_bytes},
                                                               {"releasable_bytes", s->totals.releasable_bytes}};
        for (const auto& [name, bytes] : totals) {
            Json j = record("total", c, c.step, s->device);
            j["name"] = name;
            j["bytes"] = bytes;
            line(out, j);
        }
        for (std::size_t k = 0; k < analysis::category_count; ++k) {
            if (s->categories[k].blocks == 0) continue;
            Json j = record("category", c, c.step, s->device);
            j["category"] = analysis::to_string(static_cast<analysis::Category>(k));
            j["bytes"] = s->categories[k].bytes;
            j["blocks"] = s->categories[k].blocks;
            line(out, j);
        }
        for (const auto& site : s->top_sites) {
            Json j = record("site", c, c.step, s->device);
            j["frame"] = json::site_frame(site.site);
            j["user_code"] = site.site.user_code;
            j["category"] = analysis::to_string(site.category);
            j["bytes"] = site.bytes;
            j["blocks"] = site.blocks;
            line(out, j);
        }
        return out;
    }
    const auto& stats = std::get<analysis::StatsInfo>(info);
    for (std::size_t i = 0; i < stats.capture.tables.size(); ++i) {
        const auto& table = stats.capture.tables[i];
        for (const char* name :
             {"allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes", "inactive_split_bytes"}) {
            const auto at = table.stats.find(std::string(name) + ".all.current");
            if (at == table.stats.end()) continue;
            const ByteRange r = (*at).second;
            Json j = record("total", c, table.step ? table.step : c.step, table.device);
            j["name"] = name;
            j["bytes"] = r.low + (r.high - r.low) / 2;
            j["low"] = r.low;
            j["high"] = r.high;
            j["table"] = stats.table_number(i);
            line(out, j);
        }
    }
    return out;
}

}  // namespace memsnap::report::detail
