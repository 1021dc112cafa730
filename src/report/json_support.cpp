#include "json_support.hpp"

#include <cmath>

namespace memsnap::report::json {

Json number(double value) {
    if (std::isfinite(value) && std::floor(value) == value && std::abs(value) < 9.0e15)
        return static_cast<std::int64_t>(value);
    if (!std::isfinite(value)) return nullptr;
    return value;
}

Json optional_number(const std::optional<double>& value) { return value ? number(*value) : Json(nullptr); }

Json frame(const std::string& filename, std::int64_t line, const std::string& name) {
    return {{"filename", filename}, {"line", line}, {"name", name}};
}

Json frame(const analysis::FrameText& f) { return frame(f.filename, f.line, f.name); }

Json site_frame(const analysis::SiteKey& site) { return frame(site.filename, site.line, site.name); }

Json diagnosis(const analysis::Diagnosis& d) {
    if (d.empty()) return nullptr;
    return {{"pattern", d.pattern}, {"summary", d.summary}, {"fix", d.fix}, {"evidence", d.evidence}};
}

Json stacks(const std::vector<analysis::RepresentativeStack>& stacks, const std::vector<analysis::FrameText>& table) {
    Json out = Json::array();
    for (const auto& st : stacks) {
        Json frames = Json::array();
        for (const auto i : st.frames) frames.push_back(frame(table[i]));
        out.push_back({{"size", st.size},
                       {"delta_blocks", st.delta_blocks},
                       {"delta_bytes", st.delta_bytes},
                       {"category", analysis::to_string(st.category)},
                       {"frames", frames},
                       {"frames_omitted", st.frames_omitted}});
    }
    return out;
}

Json usage(const analysis::MomentUsage& usage) {
    Json categories = Json::object();
    for (const auto c : analysis::all_categories())
        categories[std::string(analysis::to_string(c))] = usage.category_bytes[static_cast<std::size_t>(c)];
    Json sites = Json::array();
    for (const auto& s : usage.sites)
        sites.push_back({{"rank", s.rank},
                         {"frame", site_frame(s.site)},
                         {"user_code", s.site.user_code},
                         {"category", analysis::to_string(s.category)},
                         {"bytes", s.bytes},
                         {"allocations", s.allocations}});
    return {{"categories", categories}, {"sites", sites}};
}

Json oom(const analysis::OomExplanation& o, const std::vector<analysis::FrameText>& table) {
    const auto live = usage(o.usage);
    return {{"device", o.device},
            {"time_us", o.time_us >= 0 ? Json(o.time_us) : Json(nullptr)},
            {"event", o.event},
            {"requested_bytes", o.requested_bytes},
            {"device_free_bytes", o.device_free_bytes},
            {"allocated_bytes", o.allocated_bytes},
            {"reserved_bytes", o.reserved_bytes},
            {"largest_free_block_bytes", o.largest_free_block_bytes},
            {"largest_free_block_same_stream_bytes", o.largest_free_block_same_stream_bytes},
            {"stream", o.stream},
            {"device_memory_bytes", o.device_memory_bytes ? Json(*o.device_memory_bytes) : Json(nullptr)},
            {"frame", o.frame ? frame(*o.frame) : Json(nullptr)},
            {"classification", o.classification},
            {"evidence", o.evidence},
            {"advice", o.advice},
            {"categories", live.at("categories")},
            {"sites", live.at("sites")},
            {"stack", stacks({o.stack}, table).at(0)}};
}

Json range(ByteRange r) { return {{"low", r.low}, {"high", r.high}}; }

Json optional_range(const std::optional<ByteRange>& r) { return r ? range(*r) : Json(nullptr); }

Json same_process(const analysis::SameProcess& same) { return same.value ? Json(*same.value) : Json(nullptr); }

Json document(std::string_view kind) {
    Json doc;
    doc["schema_version"] = 1;
    doc["kind"] = kind;
    return doc;
}

void diff_header(Json& doc, const std::string& before, const std::string& after, const util::Steps& steps,
                 const analysis::SameProcess& same) {
    doc["before"] = before;
    doc["after"] = after;
    doc["steps"] = steps.span ? Json::array({steps.span->first, steps.span->second}) : Json(nullptr);
    doc["steps_source"] = steps.source;
    doc["same_process"] = same_process(same);
    doc["same_process_evidence"] = same.evidence;
}

namespace {

// A value as dump() writes it at `depth`: nlohmann writes a value's own lines from column 0.
void append_indented(std::string& out, const Json& value, std::size_t depth) {
    const std::string text = value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string pad(2 * depth, ' ');
    for (const char c : text) {
        out += c;
        if (c == '\n') out += pad;  // JSON strings hold no raw newline: every one is a line break
    }
}

}  // namespace

std::string dump(const Json& doc) { return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"; }

void dump(const Json& doc, std::string_view key, std::size_t count, const std::function<Json(std::size_t)>& element,
          const std::function<void(std::string_view)>& sink) {
    std::string out = "{";
    bool first = true;
    for (const auto& [name, value] : doc.items()) {
        out += first ? "\n  " : ",\n  ";
        first = false;
        out += Json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ": ";
        if (name != key || count == 0) {
            append_indented(out, value, 1);
            continue;
        }
        out += "[";
        for (std::size_t i = 0; i < count; ++i) {
            out += i == 0 ? "\n    " : ",\n    ";
            append_indented(out, element(i), 2);
            sink(out);  // one element at a time
            out.clear();
        }
        out += "\n  ]";
    }
    out += first ? "}\n" : "\n}\n";
    sink(out);
}

}  // namespace memsnap::report::json
