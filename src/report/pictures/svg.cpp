// SVG pictures, self-contained (no script, font or style loaded from anywhere): the flame
// graph of a stack profile in icicle layout (root on top, width is bytes), and the timeline
// of a trace (allocated and reserved over time, iterations, the peak and the OOMs marked).
#include "../format.hpp"
#include "pictures.hpp"
#include "profile_support.hpp"

#include <memsnap/limits.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <queue>

namespace memsnap::report::detail {

namespace {

constexpr double kWidth = 1200, kRow = 17, kTop = 56, kMargin = 10;
constexpr std::size_t kMaxDepth = 160;  // 128 frames kept, and then some
constexpr double kMinWidth = 0.3;       // narrower boxes are not drawn (their bytes stay in the parent)

// A distinct hue per category, light enough for black text.
constexpr std::array<const char*, analysis::category_count> kCategoryColors = {
    "#8fbcd4",  // parameter
    "#d4a373",  // gradient
    "#e8c39e",  // autograd_detail
    "#b5a1d6",  // optimizer_state
    "#d9cdeb",  // temporary
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

// At most `limit` bytes of `text`, cut before a character rather than inside one.
std::string clip(const std::string& text, std::size_t limit, std::string_view mark) {
    if (text.size() <= limit) return text;
    std::size_t at = limit;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) --at;
    return text.substr(0, at) + std::string(mark);
}

// What fits across the canvas: 15-pixel bold titles and 11-pixel subtitles in monospace.
constexpr std::size_t kTitleChars = 125, kSubtitleChars = 175;

std::string header(double height, const std::string& title, const std::string& subtitle) {
    return fmt::format(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
        "font-family=\"monospace\" font-size=\"11\">\n"
        "<title>{2}</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n"
        "<text x=\"{3}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{4}</text>\n"
        "<text x=\"{3}\" y=\"38\" fill=\"#555555\">{5}</text>\n",
        kWidth, height, xml_text(title), kMargin, xml_text(clip(title, kTitleChars, "...")),
        xml_text(clip(subtitle, kSubtitleChars, "...")));
}

// A chart area: x from `first` to `last` (events or steps), y from 0 to `top` bytes, with its
// axes and a byte scale.
struct Plot {
    static constexpr double kPlotTop = 60, kLeft = 90, kRight = 20;
    double height = 300;
    double first = 0, last = 1;
    std::int64_t top = 1;
    double px(double x) const { return kLeft + (kWidth - kLeft - kRight) * (x - first) / std::max(1.0, last - first); }
    double py(std::int64_t bytes) const {
        return kPlotTop + height -
               height * static_cast<double>(bytes) / static_cast<double>(std::max<std::int64_t>(1, top));
    }
    double bottom() const { return kPlotTop + height; }
    void axes(std::string& out) const {
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#000000\"/>\n", kLeft, kPlotTop,
                           bottom());
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#000000\"/>\n", kLeft, bottom(),
                           kWidth - kRight);
        for (int k = 0; k <= 4; ++k)
            out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                               py(top / 4 * k) + 4, util::human_bytes(top / 4 * k));
    }
    // A vertical dashed line at `x` with a hover title.
    std::string mark(double x, const std::string& title) const {
        return fmt::format(
            "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#bbbbbb\" "
            "stroke-dasharray=\"3,3\"><title>{3}</title></line>\n",
            px(x), kPlotTop, bottom(), xml_text(title));
    }
};

}  // namespace

namespace {

// What one flame graph draws at most, so that no capture makes a picture too big to open:
// past these, the smallest boxes under a drawn box merge into one "other" box beside its
// drawn children. A hover names at most kMaxTitleChars of a frame's name.
constexpr std::size_t kMaxBoxes = limits::picture_boxes;
constexpr std::size_t kMaxBoxBytes = limits::picture_bytes;
constexpr std::size_t kMaxTitleChars = limits::picture_title_bytes;

struct Box {
    std::size_t node, depth;
    double x, width;
    std::size_t parent;  // in FlameBody::drawn; the root's is its own
};

// The drawn boxes' SVG, biggest first, and what the budget left out.
struct FlameBody {
    std::string svg;
    std::vector<Box> drawn;
    std::size_t depth_max = 0;
    std::size_t frames_left = 0;
    std::int64_t bytes_left = 0;
};

std::string box_svg(const analysis::StackProfile& p, const std::vector<TreeNode>& nodes, const Box& b,
                    std::int64_t max_delta) {
    const auto& n = nodes[b.node];
    const std::string label = node_label(p, n);
    const std::int64_t change = n.after - n.before;
    const std::string fill =
        p.differential ? growth_color(change, max_delta) : kCategoryColors[static_cast<std::size_t>(n.category)];
    const double y = kTop + static_cast<double>(b.depth) * kRow;
    const double share =
        nodes[0].value ? 100.0 * static_cast<double>(n.value) / static_cast<double>(nodes[0].value) : 0.0;
    const std::string name = clip(label, kMaxTitleChars, "...");
    const std::string hover = p.differential
                                  ? fmt::format("{}: change {} ({} B); before {} B, after {} B; {:.2f}% of the width",
                                                name, util::signed_bytes(change), change, n.before, n.after, share)
                                  : fmt::format("{}: {} ({} B), {:.2f}%; {}", name, util::human_bytes(n.value), n.value,
                                                share, analysis::to_string(n.category));
    std::string out = fmt::format(
        "<g{}><title>{}</title><rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"#ffffff\" stroke-width=\"0.5\"/>",
        p.differential ? fmt::format(" data-delta=\"{}\"", change) : std::string(), xml_text(hover), b.x, y, b.width,
        kRow - 1, fill);
    // As much of the name as fits, at about 6.6 pixels a character.
    const auto fits = static_cast<std::size_t>(std::max(0.0, (b.width - 6) / 6.6));
    if (fits >= 3)
        out += fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text>", b.x + 3, y + 12,
                           xml_text(clip(label, fits, "..")));
    return out + "</g>\n";
}

// Boxes biggest first while the budget lasts; boxes narrower than kMinWidth are not drawn
// (their bytes stay in the parent). Children are laid out from the parent's left edge,
// biggest first, so the ones the budget leaves out are the right-hand end of each parent.
FlameBody flame_body(const analysis::StackProfile& p, const std::vector<TreeNode>& nodes, double span) {
    const double scale = nodes[0].value > 0 ? span / static_cast<double>(nodes[0].value) : 0;
    std::int64_t max_delta = 0;
    for (const auto& n : nodes) max_delta = std::max<std::int64_t>(max_delta, std::llabs(n.after - n.before));
    const auto narrower = [](const Box& a, const Box& b) { return a.width < b.width; };
    std::priority_queue<Box, std::vector<Box>, decltype(narrower)> waiting(narrower);
    waiting.push({0, 0, kMargin, span, 0});
    FlameBody body;
    while (!waiting.empty() && body.drawn.size() < kMaxBoxes && body.svg.size() < kMaxBoxBytes) {
        const Box b = waiting.top();
        waiting.pop();
        body.svg += box_svg(p, nodes, b, max_delta);
        body.drawn.push_back(b);
        body.depth_max = std::max(body.depth_max, b.depth);
        if (b.depth + 1 >= kMaxDepth) continue;
        double x = b.x;
        for (const auto c : nodes[b.node].children) {
            const double w = static_cast<double>(nodes[c].value) * scale;
            if (w >= kMinWidth) waiting.push({c, b.depth + 1, x, w, body.drawn.size() - 1});
            x += w;
        }
    }
    // What is left merges into one "other" box per parent.
    std::map<std::size_t, std::vector<Box>> left;
    for (; !waiting.empty(); waiting.pop()) left[waiting.top().parent].push_back(waiting.top());
    for (const auto& [parent, boxes] : left) {
        double x = kWidth, right = 0;
        std::int64_t bytes = 0, change = 0;
        for (const auto& b : boxes) {
            x = std::min(x, b.x);
            right = std::max(right, b.x + b.width);
            bytes += nodes[b.node].value;
            change += nodes[b.node].after - nodes[b.node].before;
        }
        body.frames_left += boxes.size();
        body.bytes_left += bytes;
        const double y = kTop + static_cast<double>(boxes.front().depth) * kRow;
        body.svg += fmt::format(
            "<g{}><title>other: {} frames not drawn (picture budget), {} ({} B)</title><rect x=\"{:.2f}\" "
            "y=\"{:.1f}\" width=\"{:.2f}\" height=\"{}\" fill=\"#eeeeee\" stroke=\"#999999\" "
            "stroke-width=\"0.5\"/>{}</g>\n",
            p.differential ? fmt::format(" data-delta=\"{}\"", change) : std::string(), boxes.size(),
            util::human_bytes(bytes), bytes, x, y, right - x, kRow - 1,
            right - x >= 40 ? fmt::format("<text x=\"{:.2f}\" y=\"{:.1f}\">other</text>", x + 3, y + 12) : "");
        body.depth_max = std::max(body.depth_max, boxes.front().depth);
    }
    return body;
}

std::string legend_svg(const analysis::StackProfile& p, double y) {
    const bool differential = p.differential;
    std::string out;
    double x = kMargin;
    const auto swatch = [&](const std::string& color, std::string_view text, double step) {
        out += fmt::format(
            "<rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.0f}\" "
            "y=\"{:.0f}\">{}</text>\n",
            x, y, color, x + 16, y + 10, text);
        x += step;
    };
    if (differential) {
        swatch(growth_color(1, 1), "grew", 110);
        swatch(growth_color(-1, 1), "shrank", 110);
        swatch("#dddddd", "unchanged", 110);
        return out;
    }
    // The categories drawn: all eleven would not fit in 1200 pixels.
    std::array<bool, analysis::category_count> drawn{};
    for (const auto& s : p.samples) drawn[static_cast<std::size_t>(s.category)] = true;
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (drawn[k]) swatch(kCategoryColors[k], analysis::to_string(static_cast<analysis::Category>(k)), 118);
    return out;
}

// A diff's change says both ways: "+X grew, -Y shrank".
std::string change_measure(const analysis::StackProfile& p) {
    std::int64_t grew = 0, shrank = 0;
    for (const auto& s : p.samples) (s.delta_bytes() > 0 ? grew : shrank) += s.delta_bytes();
    return fmt::format("{} grew, {} shrank (width is the change either way)", util::signed_bytes(grew),
                       util::signed_bytes(shrank));
}

}  // namespace

std::string profile_svg(const analysis::StackProfile& p, analysis::Side side) {
    const auto nodes = call_tree(p, side);
    const FlameBody body = flame_body(p, nodes, kWidth - 2 * kMargin);
    const double legend_y = kTop + static_cast<double>(body.depth_max + 1) * kRow + 14;
    std::string subtitle =
        p.differential && side == analysis::Side::delta
            ? change_measure(p)
            : fmt::format("{} {}; width is bytes", util::human_bytes(nodes[0].value), side_measure(p, side));
    subtitle += "; hover a box for its numbers";
    std::string budget;
    if (body.frames_left > 0)
        budget = fmt::format(
            "<text x=\"{}\" y=\"{:.0f}\" fill=\"#555555\">Picture budget ({} boxes, {} MiB): {} smaller frames "
            "holding {} are merged into 'other' boxes.</text>\n",
            kMargin, legend_y + 34, kMaxBoxes, kMaxBoxBytes >> 20, body.frames_left,
            util::human_bytes(body.bytes_left));
    return header(legend_y + (budget.empty() ? 40 : 56), profile_title(p), subtitle) + body.svg +
           legend_svg(p, legend_y) + budget + "</svg>\n";
}

std::string trace_timeline_svg(const analysis::TraceResult& t) {
    Plot plot;
    plot.height = 320;
    const double height = plot.bottom() + 70;
    std::string out = header(height, fmt::format("memory timeline of {}, device {}", t.file, t.device),
                             fmt::format("{} events; allocated (red) and reserved (blue); peak {} allocated", t.events,
                                         util::human_bytes(t.peak.bytes)));
    if (t.timeline.empty()) {
        out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n</svg>\n", kMargin, Plot::kPlotTop + 20,
                           "no timeline: this capture says nothing of when its allocations happened");
        return out;
    }
    for (const auto& p : t.timeline) plot.top = std::max({plot.top, p.allocated, p.reserved});
    plot.last = static_cast<double>(std::max<std::size_t>(1, t.timeline.back().event));
    plot.axes(out);
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\">event 0</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">event {}</text>\n",
        Plot::kLeft, plot.bottom() + 16, kWidth - Plot::kRight, plot.bottom() + 16, t.timeline.back().event);
    for (std::size_t k = 0; k < t.iteration_starts.size() && t.iteration_starts.size() <= 500; ++k)
        out += plot.mark(static_cast<double>(t.iteration_starts[k]),
                         fmt::format("iteration {} starts at event {}", k + 1, t.iteration_starts[k]));
    for (const auto& [color, pick] :
         {std::pair{"#3b6fb6", +[](const analysis::TimelinePoint& p) { return p.reserved; }},
          std::pair{"#d1495b", +[](const analysis::TimelinePoint& p) { return p.allocated; }}}) {
        std::string points;
        for (const auto& p : t.timeline)
            points += fmt::format("{:.2f},{:.2f} ", plot.px(static_cast<double>(p.event)), plot.py(pick(p)));
        out +=
            fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color, points);
    }
    const double peak_x = plot.px(static_cast<double>(t.peak.event)), peak_y = plot.py(t.peak.bytes);
    out += fmt::format(
        "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"5\" fill=\"#d1495b\"><title>peak: {} allocated at event "
        "{}</title></circle><text x=\"{:.2f}\" y=\"{:.2f}\">peak {}</text>\n",
        peak_x, peak_y, util::human_bytes(t.peak.bytes), t.peak.event, peak_x + 8, peak_y - 6,
        util::human_bytes(t.peak.bytes));
    for (const auto& o : t.ooms)
        out += fmt::format(
            "<line x1=\"{0:.2f}\" y1=\"{1}\" x2=\"{0:.2f}\" y2=\"{2}\" stroke=\"#000000\" stroke-width=\"2\">"
            "<title>out of memory: {3} requested, {4}</title></line><text x=\"{5:.2f}\" y=\"{6}\" "
            "font-weight=\"bold\">OOM</text>\n",
            plot.px(static_cast<double>(o.event)), Plot::kPlotTop, plot.bottom(), util::human_bytes(o.requested_bytes),
            xml_text(analysis::to_string(o.classification)), plot.px(static_cast<double>(o.event)) + 4,
            Plot::kPlotTop + 12);
    const double ly = plot.bottom() + 40;
    out += fmt::format(
        "<rect x=\"{0}\" y=\"{1}\" width=\"12\" height=\"3\" fill=\"#d1495b\"/><text x=\"{2}\" y=\"{3}\">"
        "allocated</text><rect x=\"{4}\" y=\"{1}\" width=\"12\" height=\"3\" fill=\"#3b6fb6\"/><text x=\"{5}\" "
        "y=\"{3}\">reserved</text><text x=\"{6}\" y=\"{3}\">dashed: iteration starts ({7})</text>\n",
        Plot::kLeft, ly, Plot::kLeft + 16, ly + 5, Plot::kLeft + 110, Plot::kLeft + 126, Plot::kLeft + 220,
        xml_text(analysis::to_string(t.iteration_source)));
    out += "</svg>\n";
    return out;
}

}  // namespace memsnap::report::detail

namespace memsnap::report::detail {

std::string trend_svg(const analysis::TrendResult& t) {
    Plot plot;
    const double height = plot.bottom() + 70;
    std::string out =
        header(height, fmt::format("memory over {} captures: {}", t.steps.size(), analysis::to_string(t.verdict)),
               fmt::format("steps {} → {} ({}); allocated (red), reserved (blue), the first site (green)",
                           t.steps.front(), t.steps.back(), t.steps_source));
    // Drawn in this order, so that the totals lie over the site and allocated over reserved
    // (a site that holds all the memory has the line of allocated).
    std::vector<std::pair<const char*, const std::vector<std::int64_t>*>> lines;
    if (!t.sites.empty()) lines.emplace_back("#3f9a4b", &t.sites.front().bytes_by_step);
    for (const auto& [name, color] : {std::pair{"reserved_bytes", "#3b6fb6"}, std::pair{"allocated_bytes", "#d1495b"}})
        for (const auto& s : t.totals)
            if (s.name == name) lines.emplace_back(color, &s.bytes);
    for (const auto& [color, values] : lines)
        for (const auto v : *values) plot.top = std::max(plot.top, v);
    plot.first = static_cast<double>(t.steps.front());
    plot.last = static_cast<double>(t.steps.back());
    plot.axes(out);
    if (t.warmup > 0 && t.warmup < t.steps.size())
        out += plot.mark(static_cast<double>(t.steps[t.warmup]),
                         fmt::format("the fit starts here (--warmup {})", t.warmup));
    for (const auto& [color, values] : lines) {
        std::string points;
        for (std::size_t i = 0; i < values->size() && i < t.steps.size(); ++i)
            points += fmt::format("{:.2f},{:.2f} ", plot.px(static_cast<double>(t.steps[i])), plot.py((*values)[i]));
        out +=
            fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", color, points);
        for (std::size_t i = 0; i < values->size() && i < t.steps.size(); ++i)
            out += fmt::format(
                "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"2.5\" fill=\"{}\"><title>{} {}: {} B</title></circle>\n",
                plot.px(static_cast<double>(t.steps[i])), plot.py((*values)[i]), color,
                t.steps_known ? "step" : "capture", t.steps[i], (*values)[i]);
    }
    out += fmt::format("<text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n",
                       Plot::kLeft, plot.bottom() + 16, t.steps.front(), kWidth - Plot::kRight, plot.bottom() + 16,
                       t.steps.back());
    if (!t.sites.empty())
        // From the plot's left edge: 75 pixels fewer than a subtitle's line, "green: " included.
        out += fmt::format("<text x=\"{}\" y=\"{}\">green: {}</text>\n", Plot::kLeft, plot.bottom() + 40,
                           xml_text(clip(site_label(t.sites.front().site), kSubtitleChars - 20, "...")));
    out += "</svg>\n";
    return out;
}

}  // namespace memsnap::report::detail
