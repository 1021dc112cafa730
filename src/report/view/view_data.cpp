#include "view_data.hpp"

#include "../pictures/profile_support.hpp"
#include "view_js.hpp"

#include <memsnap/util/format.hpp>
#include <memsnap/util/sha256.hpp>

#include <nlohmann/json.hpp>

#include <limits>
#include <numeric>

namespace memsnap::report::detail {

namespace {

using nlohmann::json;

// An id of the view's tables, or -1 for "the rest, summed".
json id_or_rest(std::uint32_t id) { return id == std::numeric_limits<std::uint32_t>::max() ? json(-1) : json(id); }

// Rows flat: id, bytes, allocations, id, bytes, ...
json rows(const std::vector<analysis::ViewRow>& rows) {
    json out = json::array();
    for (const auto& r : rows) {
        out.push_back(r.id);
        out.push_back(r.bytes);
        out.push_back(r.allocations);
    }
    return out;
}

// The largest unit all blocks' offsets and sizes are multiples of (torch rounds blocks to 512
// bytes): the page writes blocks in it, a third of the digits.
std::int64_t block_unit(const analysis::TraceView& v) {
    std::int64_t unit = 0;
    for (const auto& m : v.moments)
        for (const auto& s : m.segments)
            for (const auto& b : s.blocks) unit = std::gcd(unit, std::gcd(b.offset, b.size));
    return unit > 0 ? unit : 1;
}

// Segments as [address, size, stream, [offset, size, state, ...]], blocks in `unit`s.
json segments(const std::vector<analysis::ViewSegment>& segments, std::int64_t unit) {
    json out = json::array();
    for (const auto& s : segments) {
        json blocks = json::array();
        for (const auto& b : s.blocks) {
            blocks.push_back(b.offset / unit);
            blocks.push_back(b.size / unit);
            blocks.push_back(std::string(1, b.state));
        }
        out.push_back(json::array({s.address, s.size, s.stream, std::move(blocks)}));
    }
    return out;
}

json moment(const analysis::ViewMoment& m, std::int64_t unit) {
    return {{"at", m.at},
            {"kind", m.kind},
            {"time_us", m.time_us},
            {"allocated", m.allocated},
            {"reserved", m.reserved},
            {"sites", rows(m.sites)},
            {"other_sites", json::array({m.other_site_bytes, m.other_sites})},
            {"stacks", rows(m.stacks)},
            {"other_stacks", m.other_stack_bytes},
            {"unattributed", m.unattributed},
            {"segments", segments(m.segments, unit)},
            {"segments_total", m.segments_total}};
}

json tables(const analysis::TraceView& v) {
    json frames = json::array(), sites = json::array();
    // Names from the file, shown as every writer shows them (control and bidi characters escaped).
    for (const auto& f : v.frames) frames.push_back(util::printable(folded_frame(f)));
    for (const auto& s : v.sites)
        sites.push_back(json::array({util::printable(s.site.label()), std::string(analysis::to_string(s.category))}));
    return {{"frames", std::move(frames)}, {"stacks", v.stacks}, {"sites", std::move(sites)}};
}

}  // namespace

std::string view_json(const analysis::TraceView& v) {
    json out = tables(v);
    out["file"] = util::printable(v.file);
    out["device"] = v.device;
    out["events"] = v.events;
    out["time_first_us"] = v.time_first_us;
    out["time_last_us"] = v.time_last_us;
    out["allocations"] = v.allocations;
    out["peak"] = v.peak;
    json bands = json::array();
    for (const auto& b : v.bands) bands.push_back(json::array({b.from, b.to, b.bytes, b.site, b.stack}));
    out["bands"] = std::move(bands);
    out["grid"] = v.grid;
    out["grid_allocated"] = v.grid_allocated;
    out["grid_reserved"] = v.grid_reserved;
    json merged = json::array();
    for (const auto& m : v.merged) {
        json steps = json::array();
        for (const auto& [point, bytes] : m.steps) {
            steps.push_back(point);
            steps.push_back(bytes);
        }
        merged.push_back(json::array({id_or_rest(m.site), id_or_rest(m.stack), std::move(steps)}));
    }
    out["merged"] = std::move(merged);
    json moments = json::array();
    const std::int64_t unit = block_unit(v);
    out["block_unit"] = unit;
    for (const auto& m : v.moments) moments.push_back(moment(m, unit));
    out["moments"] = std::move(moments);
    out["iterations"] = v.iterations;
    out["snapshots"] = v.snapshots;
    out["ooms"] = v.ooms;
    std::string text = out.dump(-1, ' ', false, json::error_handler_t::replace);
    std::string safe;
    safe.reserve(text.size());
    for (const char c : text) {
        if (c == '<')
            safe += "\\u003c";
        else
            safe += c;
    }
    return safe;
}

std::string view_elements(const analysis::TraceView& view) {
    return "<script type=\"application/json\" id=\"memsnap-view-data\">" + view_json(view) + "</script>\n<script>" +
           std::string(kViewScript) + "</script>\n";
}

std::string view_script_source() {
    const std::string_view script = kViewScript;
    const auto digest = util::sha256(script);
    return "'sha256-" + util::base64(digest.data(), digest.size()) + "'";
}

}  // namespace memsnap::report::detail
