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

std::string dump(const Json& doc) {
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace memsnap::report::json
