// SVG pictures, self-contained (no script, font or style loaded from anywhere): the flame
// graph of a stack profile in icicle layout (root on top, width is bytes), and the timeline
// of a trace (allocated and reserved over time, iterations, the peak and the OOMs marked).
#include "format.hpp"
#include "profile_support.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace memsnap::report::detail {

namespace {

constexpr double kWidth = 1200, kRow = 17, kTop = 56, kMargin = 10;
constexpr std::size_t kMaxDepth = 160;  // 128 frames kept, and then some
constexpr double kMinWidth = 0.3;       // narrower boxes are not drawn (their bytes stay in the parent)

// A distinct hue per category, light enough for black text.
constexpr std::array<const char*, analysis::category_count> kCategoryColors = {
    "#8fbcd4",  // parameter
    "#d4a373",  // gradient
    "#b5a1d6",  // optimizer_state
    "#f2c14e",  // activation
    "#9ccc8c",  // autocast_cache
    "#e5989b",  // compiled_graph
    "#7fc8c0",  // communication
    "#c9c27a",  // workspace
    "#c8c8c8",  // unknown
};

std::string growth_color(std::int64_t delta, std::int64_t scale) {
    if (scale <= 0 || delta == 0) return "#dddddd";
    const double share = std::min(1.0, std::fabs(static_cast<double>(delta)) / static_cast<double>(scale));
    const int fade = static_cast<int>(std::lround(220 - 170 * share));
    return delta > 0 ? fmt::format("rgb(235,{},{})", fade, fade) : fmt::format("rgb({},{},235)", fade, fade);
}

std::string node_label(const analysis::StackProfile& p, const TreeNode& n) {
    if (n.frame == -1) return "all";
    if (n.frame == -2) return "[outer frames omitted]";
    return folded_frame(p.frame_table[static_cast<std::size_t>(n.frame)]);
}

std::string header(double height, const std::string& title, const std::string& subtitle) {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"monospace\" font-size=\"11\">\n"
        "<title>{2}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        "<text x=\"{3}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{2}</text>\n"
        "<text x=\"{3}\" y=\"38\" fill=\"#555555\">{4}</text>\n",
        kWidth, height, xml_text(title), kMargin, xml_text(subtitle));
}

}  // namespace

std::string profile_svg(const analysis::StackProfile& p, analysis::Side side) {
    const auto nodes = call_tree(p, side);
    const double span = kWidth - 2 * kMargin;
    const double scale = nodes[0].value > 0 ? span / static_cast<double>(nodes[0].value) : 0;
    std::int64_t max_delta = 0;
    for (const auto& n : nodes) max_delta = std::max<std::int64_t>(max_delta, std::llabs(n.after - n.before));
    // Lay out depth-first: x from the parent's left edge, children biggest first.
    struct Box {
        std::size_t node, depth;
        double x, width;
    };
    std::vector<Box> boxes;
    std::size_t depth_max = 0;
    std::vector<Box> stack{{0, 0, kMargin, span}};
    while (!stack.empty()) {
        const Box b = stack.back();
        stack.pop_back();
        boxes.push_back(b);
        depth_max = std::max(depth_max, b.depth);
        if (b.depth + 1 >= kMaxDepth) continue;
        double x = b.x;
        for (const auto c : nodes[b.node].children) {
            const double w = static_cast<double>(nodes[c].value) * scale;
            if (w >= kMinWidth) stack.push_back({c, b.depth + 1, x, w});
            x += w;
        }
    }
    const double legend_y = kTop + static_cast<double>(depth_max + 1) * kRow + 14;
    const double height = legend_y + 40;
    const std::string side_name = !p.differential          ? p.measure
                                  : side == analysis::Side::before ? "bytes before"
                                  : side == analysis::Side::after  ? "bytes after"
                                                                   : "growth";
    std::string out = header(height, p.title,
                             fmt::format("{} {}; width is bytes; hover a box for its numbers", util::human_bytes(nodes[0].value),
                                         side_name));
    for (const auto& b : boxes) {
        const auto& n = nodes[b.node];
        const std::string label = node_label(p, n);
        const std::string fill = p.differential ? growth_color(n.after - n.before, max_delta)
                                                : kCategoryColors[static_cast<std::size_t>(n.category)];
        const double y = kTop + static_cast<double>(b.depth) * kRow;
        std::string hover = fmt::format("{}: {} ({} B), {:.2f}%", label, util::human_bytes(n.value), n.value,
                                        nodes[0].value ? 100.0 * static_cast<double>(n.value) / static_cast<double>(nodes[0].value) : 0.0);
        if (p.differential)
            hover += fmt::format("; before {} B, after {} B, change {} B", n.before, n.after, n.after - n.before);
        else
            hover += fmt::format("; {}", analysis::to_string(n.category));
        out += fmt::format("<g><title>{}</title><rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" "
                           "stroke=\"#ffffff\" stroke-width=\"0.5\"/>",
                           xml_text(hover), b.x, y, b.width, kRow - 1, fill);
        // As much of the name as fits, at about 6.6 pixels a character.
        const auto fits = static_cast<std::size_t>(std::max(0.0, (b.width - 6) / 6.6));
        if (fits >= 3) {
            std::string shown = label.size() <= fits ? label : label.substr(0, fits - 2) + "..";
            out += fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text>", b.x + 3, y + 12, xml_text(shown));
        }
        out += "</g>\n";
    }
    // Legend.
    double x = kMargin;
    if (p.differential) {
        for (const auto& [color, text] : {std::pair{growth_color(1, 1), std::string("grew")},
                                          std::pair{growth_color(-1, 1), std::string("shrank")},
                                          std::pair{std::string("#dddddd"), std::string("unchanged")}}) {
            out += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
                               "y=\"{:.0f}\">{}</text>\n",
                               x, legend_y, color, x + 16, legend_y + 10, text);
            x += 110;
        }
    } else {
        for (std::size_t k = 0; k < analysis::category_count; ++k) {
            const auto name = analysis::to_string(static_cast<analysis::Category>(k));
            out += fmt::format("<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
                               "y=\"{:.0f}\">{}</text>\n",
                               x, legend_y, kCategoryColors[k], x + 16, legend_y + 10, name);
            x += 130;
        }
    }
    out += "</svg>\n";
    return out;
}

std::string trace_timeline_svg(const analysis::TraceResult& t) {
    constexpr double kPlotTop = 60, kPlotHeight = 320, kLeft = 90, kRight = 20;
    const double height = kPlotTop + kPlotHeight + 70;
    std::string out = header(height, fmt::format("memory timeline of {}, device {}", t.file, t.device),
                             fmt::format("{} events; allocated (red) and reserved (blue); peak {} allocated", t.events,
                                         util::human_bytes(t.peak.bytes)));
    if (t.timeline.empty()) {
        out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n</svg>\n", kMargin, kPlotTop + 20,
                           "no timeline: this capture says nothing of when its allocations happened");
        return out;
    }
    std::int64_t top = 1;
    for (const auto& p : t.timeline) top = std::max({top, p.allocated, p.reserved});
    const double last = static_cast<double>(std::max<std::size_t>(1, t.timeline.back().event));
    const auto px = [&](std::size_t event) { return kLeft + (kWidth - kLeft - kRight) * static_cast<double>(event) / last; };
    const auto py = [&](std::int64_t bytes) {
        return kPlotTop + kPlotHeight - kPlotHeight * static_cast<double>(bytes) / static_cast<double>(top);
    };
    // Axes and scale.
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000000\"/>\n", kLeft, kPlotTop,
                       kPlotTop + kPlotHeight);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\"/>\n", kLeft,
                       kPlotTop + kPlotHeight, kWidth - kRight);
    for (int k = 0; k <= 4; ++k) {
        const auto bytes = top / 4 * k;
        out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, py(bytes) + 4,
                           util::human_bytes(bytes));
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">event 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">event {}</text>\n",
                       kLeft, kPlotTop + kPlotHeight + 16, kWidth - kRight, kPlotTop + kPlotHeight + 16,
                       t.timeline.back().event);
    // Iteration starts.
    for (std::size_t k = 0; k < t.iteration_starts.size() && t.iteration_starts.size() <= 500; ++k)
        out += fmt::format("<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#bbbbbb\" "
                           "stroke-dasharray=\"3,3\"><title>iteration {3} starts at event {4}</title></line>\n",
                           px(t.iteration_starts[k]), kPlotTop, kPlotTop + kPlotHeight, k + 1, t.iteration_starts[k]);
    for (const auto& [color, pick] :
         {std::pair{"#3b6fb6", +[](const analysis::TimelinePoint& p) { return p.reserved; }},
          std::pair{"#d1495b", +[](const analysis::TimelinePoint& p) { return p.allocated; }}}) {
        std::string points;
        for (const auto& p : t.timeline) points += fmt::format("{:.2f},{:.2f} ", px(p.event), py(pick(p)));
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color, points);
    }
    out += fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"#d1495b\"><title>peak: {} allocated at event "
                       "{}</title></circle><text x=\"{:.2f}\" y=\"{:.2f}\">peak {}</text>\n",
                       px(t.peak.event), py(t.peak.bytes), util::human_bytes(t.peak.bytes), t.peak.event,
                       px(t.peak.event) + 8, py(t.peak.bytes) - 6, util::human_bytes(t.peak.bytes));
    for (const auto& o : t.ooms)
        out += fmt::format("<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#000000\" stroke-width=\"2\">"
                           "<title>out of memory: {3} requested, {4}</title></line><text x=\"{5:.2f}\" y=\"{6}\" "
                           "font-weight=\"bold\">OOM</text>\n",
                           px(o.event), kPlotTop, kPlotTop + kPlotHeight, util::human_bytes(o.requested_bytes),
                           xml_text(o.classification), px(o.event) + 4, kPlotTop + 12);
    const double ly = kPlotTop + kPlotHeight + 40;
    out += fmt::format("<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"3\" fill=\"#d1495b\"/><text x=\"{2}\" y=\"{3}\">"
                       "allocated</text><rect x=\"{4}\" y=\"{1}\" width=\"12\" height=\"3\" fill=\"#3b6fb6\"/><text x=\"{5}\" "
                       "y=\"{3}\">reserved</text><text x=\"{6}\" y=\"{3}\">dashed: iteration starts ({7})</text>\n",
                       kLeft, ly, kLeft + 16, ly + 5, kLeft + 110, kLeft + 126, kLeft + 220, xml_text(t.iteration_source));
    out += "</svg>\n";
    return out;
}

}  // namespace memsnap::report::detail

namespace memsnap::report::detail {

std::string trend_svg(const analysis::TrendResult& t) {
    constexpr double kPlotTop = 60, kPlotHeight = 300, kLeft = 90, kRight = 20;
    const double height = kPlotTop + kPlotHeight + 70;
    std::string out = header(height, fmt::format("memory over {} captures: {}", t.steps.size(), t.verdict),
                             fmt::format("steps {} → {} ({}); allocated (red), reserved (blue), the first site (green)",
                                         t.steps.front(), t.steps.back(), t.steps_source));
    std::vector<std::pair<const char*, const std::vector<std::int64_t>*>> lines;
    for (const auto& s : t.totals) {
        if (s.name == "allocated_bytes") lines.emplace_back("#d1495b", &s.bytes);
        if (s.name == "reserved_bytes") lines.emplace_back("#3b6fb6", &s.bytes);
    }
    if (!t.sites.empty()) lines.emplace_back("#3f9a4b", &t.sites.front().bytes_by_step);
    std::int64_t top = 1;
    for (const auto& [color, values] : lines)
        for (const auto v : *values) top = std::max(top, v);
    const double first = static_cast<double>(t.steps.front());
    const double range = std::max(1.0, static_cast<double>(t.steps.back()) - first);
    const auto px = [&](std::int64_t step) {
        return kLeft + (kWidth - kLeft - kRight) * (static_cast<double>(step) - first) / range;
    };
    const auto py = [&](std::int64_t bytes) {
        return kPlotTop + kPlotHeight - kPlotHeight * static_cast<double>(bytes) / static_cast<double>(top);
    };
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000000\"/>\n", kLeft, kPlotTop,
                       kPlotTop + kPlotHeight);
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\"/>\n", kLeft,
                       kPlotTop + kPlotHeight, kWidth - kRight);
    for (int k = 0; k <= 4; ++k)
        out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6, py(top / 4 * k) + 4,
                           util::human_bytes(top / 4 * k));
    if (t.warmup > 0 && t.warmup < t.steps.size())
        out += fmt::format("<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#bbbbbb\" "
                           "stroke-dasharray=\"3,3\"><title>the fit starts here (--warmup {3})</title></line>\n",
                           px(t.steps[t.warmup]), kPlotTop, kPlotTop + kPlotHeight, t.warmup);
    for (const auto& [color, values] : lines) {
        std::string points;
        for (std::size_t i = 0; i < values->size() && i < t.steps.size(); ++i)
            points += fmt::format("{:.2f},{:.2f} ", px(t.steps[i]), py((*values)[i]));
        out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color, points);
        for (std::size_t i = 0; i < values->size() && i < t.steps.size(); ++i)
            out += fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"2.5\" fill=\"{}\"><title>{} {}: {} B</title></circle>\n",
                               px(t.steps[i]), py((*values)[i]), color, t.steps_known ? "step" : "capture", t.steps[i],
                               (*values)[i]);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft,
                       kPlotTop + kPlotHeight + 16, t.steps.front(), kWidth - kRight, kPlotTop + kPlotHeight + 16,
                       t.steps.back());
    if (!t.sites.empty())
        out += fmt::format("<text x=\"{}\" y=\"{}\">green: {}</text>\n", kLeft, kPlotTop + kPlotHeight + 40,
                           xml_text(site_label(t.sites.front().site)));
    out += "</svg>\n";
    return out;
}

}  // namespace memsnap::report::detail
