// `--format html`: one self-contained report file. No script, no font, no style sheet and no
// image is loaded from anywhere (a Content-Security-Policy says so to the browser): the
// verdict, totals, categories, ranked sites with their stacks in <details>, and the pictures
// inline as SVG.
#include "format.hpp"
#include "profile_support.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1240px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left}"
    "td.n{text-align:right;font-family:monospace}code,pre{font-family:monospace;font-size:12px}"
    ".verdict{font-weight:bold;padding:2px 8px;border-radius:4px;background:#eee}"
    ".leak{background:#f4c7c3}.stable{background:#cde8cd}"
    "details{margin:2px 0}summary{cursor:pointer}";

struct Page {
    std::string body;
    void h2(std::string_view text) { body += fmt::format("<h2>{}</h2>\n", xml_text(text)); }
    void paragraph(std::string_view text) { body += fmt::format("<p>{}</p>\n", xml_text(text)); }
    void list(const std::vector<std::string>& items) {
        if (items.empty()) return;
        body += "<ul>\n";
        for (const auto& i : items) body += fmt::format("<li>{}</li>\n", xml_text(i));
        body += "</ul>\n";
    }
    void verdict(std::string_view name) {
        body += fmt::format("<p>Verdict: <span class=\"verdict {0}\">{1}</span></p>\n", xml_text(name), xml_text(name));
    }
    // A table; cells that start with '=' are numbers (right-aligned, the '=' dropped).
    void table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
        body += "<table>\n<tr>";
        for (const auto& h : head) body += fmt::format("<th>{}</th>", xml_text(h));
        body += "</tr>\n";
        for (const auto& row : rows) {
            body += "<tr>";
            for (const auto& cell : row)
                body += !cell.empty() && cell.front() == '='
                            ? fmt::format("<td class=\"n\">{}</td>", xml_text(cell.substr(1)))
                            : fmt::format("<td>{}</td>", xml_text(cell));
            body += "</tr>\n";
        }
        body += "</table>\n";
    }
    void details(std::string_view summary, const std::vector<std::string>& lines) {
        body += fmt::format("<details><summary>{}</summary><pre>", xml_text(summary));
        for (const auto& l : lines) body += xml_text(l) + "\n";
        body += "</pre></details>\n";
    }
    // An SVG document inline, without its XML declaration.
    void picture(const std::string& svg) {
        const auto start = svg.find("<svg");
        body += "<div>" + (start == std::string::npos ? svg : svg.substr(start)) + "</div>\n";
    }
    std::string finish(std::string_view title) const {
        return fmt::format(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
            "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n{2}</body>\n</html>\n",
            xml_text(title), kStyle, body);
    }
};

std::vector<std::string> category_row(std::string_view name, std::int64_t before, std::int64_t after) {
    return {std::string(name), "=" + util::human_bytes(before), "=" + util::human_bytes(after),
            "=" + util::signed_bytes(after - before)};
}

}  // namespace

std::string snapshot_diff_html(const analysis::SnapshotDiff& d, const analysis::StackProfile& profile,
                               const RenderOptions& options) {
    Page p;
    p.verdict(analysis::to_string(d.verdict.verdict));
    p.paragraph(fmt::format("{} → {}; steps {}; same process: {}", d.before_file, d.after_file, steps_text(d.steps),
                            same_process_text(d.same_process)));
    p.list(d.verdict.evidence);
    p.list(d.verdict.advice);
    p.h2("Totals");
    std::vector<std::vector<std::string>> rows;
    for (const auto& f : analysis::TotalsChange::fields()) {
        const auto& t = d.totals.*f.member;
        rows.push_back(category_row(f.name, t.before, t.after));
    }
    p.table({"total", "before", "after", "change"}, rows);
    p.h2("Categories of live memory");
    rows.clear();
    for (std::size_t k = 0; k < analysis::category_count; ++k) {
        const auto& c = d.categories[k];
        if (c.before_blocks || c.after_blocks)
            rows.push_back(
                category_row(analysis::to_string(static_cast<analysis::Category>(k)), c.before_bytes, c.after_bytes));
    }
    p.table({"category", "before", "after", "change"}, rows);
    p.h2(fmt::format("Sites ({} of {})", d.sites.size(), d.sites_total));
    rows.clear();
    for (const auto& s : d.sites)
        rows.push_back({fmt::format("={}", s.rank), std::string(analysis::to_string(s.verdict)),
                        "=" + util::signed_bytes(s.delta_bytes),
                        "=" + util::rate(s.growth_bytes_per_step, d.steps.known()), site_label(s.site),
                        std::string(analysis::to_string(s.category))});
    p.table({"#", "verdict", "change", "rate", "site", "category"}, rows);
    for (const auto& s : d.sites) {
        std::vector<std::string> lines;
        if (!s.diagnosis.empty()) lines.push_back(s.diagnosis.summary + "; fix: " + s.diagnosis.fix);
        for (const auto& st : s.stacks) {
            lines.push_back(fmt::format("stack ({} blocks of {}, {}):", st.delta_blocks, util::human_bytes(st.size),
                                        util::signed_bytes(st.delta_bytes)));
            for (const auto& l : stack_lines(st, d.frame_table, options.cpp_frames, 0)) lines.push_back("  " + l);
        }
        p.details(fmt::format("#{} {}", s.rank, site_label(s.site)), lines);
    }
    p.h2("Where memory grew");
    p.picture(profile_svg(profile, analysis::Side::delta));
    p.list(d.notes);
    return p.finish(fmt::format("memsnap diff: {}", analysis::to_string(d.verdict.verdict)));
}

std::string snapshot_info_html(const analysis::SnapshotInfo& s, const analysis::StackProfile& profile) {
    Page p;
    p.paragraph(fmt::format("{} ({}, {})", s.file, s.writer, s.generation));
    p.h2("Memory");
    const std::pair<const char*, std::int64_t> totals[] = {{"reserved", s.totals.reserved_bytes},
                                                           {"allocated", s.totals.allocated_bytes},
                                                           {"active", s.totals.active_bytes},
                                                           {"requested", s.totals.requested_bytes},
                                                           {"inactive (cached)", s.totals.inactive_bytes},
                                                           {"inactive split", s.totals.inactive_split_bytes},
                                                           {"releasable", s.totals.releasable_bytes}};
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, bytes] : totals)
        rows.push_back({name, "=" + util::human_bytes(bytes), fmt::format("={}", bytes)});
    p.table({"total", "", "bytes"}, rows);
    p.h2("Categories of live memory");
    rows.clear();
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (s.categories[k].blocks)
            rows.push_back({std::string(analysis::to_string(static_cast<analysis::Category>(k))),
                            "=" + util::human_bytes(s.categories[k].bytes),
                            fmt::format("={}", s.categories[k].blocks)});
    p.table({"category", "bytes", "blocks"}, rows);
    p.h2(fmt::format("Top sites ({} of {})", s.top_sites.size(), s.site_count));
    rows.clear();
    for (std::size_t i = 0; i < s.top_sites.size(); ++i) {
        const auto& u = s.top_sites[i];
        rows.push_back({fmt::format("={}", i + 1), "=" + util::human_bytes(u.bytes), fmt::format("={}", u.blocks),
                        site_label(u.site), std::string(analysis::to_string(u.category))});
    }
    p.table({"#", "bytes", "blocks", "site", "category"}, rows);
    p.h2("Live memory by stack");
    p.picture(profile_svg(profile, analysis::Side::after));
    return p.finish(fmt::format("memsnap info: {}", s.file));
}

std::string trace_html(const analysis::TraceResult& t, const analysis::StackProfile& profile,
                       const RenderOptions& options) {
    Page p;
    p.paragraph(fmt::format("{}, device {}: {} events, {} iterations ({}){}", t.file, t.device, t.events, t.iterations,
                            t.iteration_source, t.truncated ? "; the ring buffer was truncated" : ""));
    p.list(t.truncation_evidence);
    p.list(t.disagreements);
    if (t.ordered()) {
        p.h2("Timeline");
        p.picture(trace_timeline_svg(t));
    }
    for (const auto& o : t.ooms) {
        p.h2(fmt::format("Out of memory: {}", o.classification));
        p.paragraph(fmt::format("requested {}, {} free on the device, {} allocated, {} reserved, largest free block {}",
                                util::human_bytes(o.requested_bytes), util::human_bytes(o.device_free_bytes),
                                util::human_bytes(o.allocated_bytes), util::human_bytes(o.reserved_bytes),
                                util::human_bytes(o.largest_free_block_bytes)));
        p.list(o.evidence);
        p.list(o.advice);
    }
    p.h2(fmt::format("Live at the end ({} of {} sites)", t.sites.size(), t.sites_total));
    std::vector<std::vector<std::string>> rows;
    for (const auto& s : t.sites)
        rows.push_back({fmt::format("={}", s.rank), s.verdict, "=" + util::human_bytes(s.live_bytes),
                        fmt::format("={}", s.live_allocations), run_lengths(s.per_iteration), site_label(s.site)});
    p.table({"#", "verdict", "bytes", "allocations", "per iteration", "site"}, rows);
    for (const auto& s : t.sites) {
        std::vector<std::string> lines;
        for (const auto& st : s.stacks)
            for (const auto& l : stack_lines(st, t.frame_table, options.cpp_frames, 0)) lines.push_back(l);
        if (!lines.empty()) p.details(fmt::format("#{} {}", s.rank, site_label(s.site)), lines);
    }
    p.h2(profile.title);
    p.picture(profile_svg(profile, analysis::Side::after));
    p.list(t.notes);
    return p.finish(fmt::format("memsnap trace: {}", t.file));
}

std::string trend_html(const analysis::TrendResult& t) {
    Page p;
    p.verdict(t.verdict);
    p.paragraph(fmt::format("{} captures, steps {} → {} ({})", t.steps.size(), t.steps.front(), t.steps.back(),
                            t.steps_source));
    p.list(t.evidence);
    p.h2("Totals");
    p.picture(trend_svg(t));
    std::vector<std::vector<std::string>> rows;
    for (const auto* group : {&t.totals, &t.categories})
        for (const auto& s : *group)
            rows.push_back({s.name, "=" + util::human_bytes(s.bytes.front()), "=" + util::human_bytes(s.bytes.back()),
                            "=" + util::rate(s.fit.slope_bytes_per_step, t.steps_known),
                            fmt::format("={:.2f}", s.fit.r2), s.fit.verdict});
    p.table({"series", "first", "last", "slope", "R²", "verdict"}, rows);
    if (!t.sites.empty()) {
        p.h2(fmt::format("Sites ({} of {})", t.sites.size(), t.sites_total));
        rows.clear();
        for (const auto& s : t.sites)
            rows.push_back({fmt::format("={}", s.rank), s.fit.verdict,
                            "=" + util::rate(s.fit.slope_bytes_per_step, t.steps_known),
                            fmt::format("={:.2f}", s.fit.r2), "=" + util::human_bytes(s.bytes_by_step.back()),
                            site_label(s.site), std::string(analysis::to_string(s.category))});
        p.table({"#", "verdict", "slope", "R²", "last", "site", "category"}, rows);
        for (const auto& s : t.sites)
            if (!s.diagnosis.empty())
                p.details(fmt::format("#{} {}", s.rank, site_label(s.site)),
                          {s.diagnosis.summary, "fix: " + s.diagnosis.fix});
    }
    p.list(t.notes);
    return p.finish(fmt::format("memsnap trend: {}", t.verdict));
}

}  // namespace memsnap::report::detail
