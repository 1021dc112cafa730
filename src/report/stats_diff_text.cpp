// Text and Markdown writers for the summary/stats diff.
#include <memsnap/report/stats_diff.hpp>

#include <fmt/format.h>

#include <array>

namespace memsnap::report {

namespace {

// The rows people read first; the full set is in JSON and CSV.
constexpr std::array<const char*, 13> kKeyMetrics = {
    "allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current",
    "requested_bytes.all.current", "inactive_split_bytes.all.current", "allocated_bytes.all.peak",
    "reserved_bytes.all.peak", "allocation.all.current", "active.all.current",
    "segment.all.current", "inactive_split.all.current", "num_ooms", "num_alloc_retries"};

std::string device_label(const analysis::DeviceDiff& d) {
    return d.device ? fmt::format("device {}", *d.device) : std::string("device unknown");
}

std::string steps_text(const analysis::StatsDiff& diff) {
    return diff.steps ? fmt::format("steps {} → {}", diff.steps->first, diff.steps->second)
                      : std::string("steps unknown");
}

struct Row {
    std::string metric, before, after, delta, per_step;
};

std::vector<Row> key_rows(const analysis::DeviceDiff& d) {
    std::vector<Row> rows;
    for (const char* key : kKeyMetrics) {
        const auto it = d.metrics.find(key);
        if (it == d.metrics.end()) continue;
        const auto& m = it->second;
        const bool bytes = stats::is_byte_metric(key);
        rows.push_back({key, stats::format_range_compact(m.before, bytes), stats::format_range_compact(m.after, bytes),
                        stats::format_delta(m.delta, bytes),
                        m.per_step ? stats::format_delta(*m.per_step, bytes) : std::string("—")});
    }
    return rows;
}

std::string series_text(const analysis::DeviceDiff& d, const char* indent) {
    std::string out;
    for (const auto& [key, t] : d.trends) {
        const bool bytes = stats::is_byte_metric(key);
        std::string values;
        for (const auto& v : t.values) values += (values.empty() ? "" : ", ") + stats::format_range_compact(v, bytes);
        out += fmt::format("{}{}: {}, first→last {}, {} {}; values: {}\n", indent, key, t.direction,
                           stats::format_delta(t.first_to_last, bytes), stats::format_delta(t.slope, bytes),
                           t.slope_unit == "per_step" ? "per step" : "per capture", values);
    }
    return out;
}

std::string points_text(const analysis::DeviceDiff& d) {
    std::string out;
    for (const auto& p : d.series)
        out += fmt::format("{}#{} {} line {}{}", out.empty() ? "" : ", ", p.index, p.source, p.line,
                           p.step ? fmt::format(" step {}", *p.step) : std::string());
    return out;
}

}  // namespace

std::string render_stats_diff_text(const analysis::StatsDiff& diff) {
    std::string out = fmt::format("memory diff ({} → {}), {}\n", stats::to_string(diff.before_kind),
                                  stats::to_string(diff.after_kind), steps_text(diff));
    for (const auto& d : diff.devices) {
        out += fmt::format("\n{}: verdict {}\n\n", device_label(d), analysis::to_string(d.verdict.verdict));
        out += fmt::format("  {:<34} {:<22} {:<22} {:<26} {}\n", "metric", "before", "after", "delta", "per step");
        for (const auto& r : key_rows(d))
            out += fmt::format("  {:<34} {:<22} {:<22} {:<26} {}\n", r.metric, r.before, r.after, r.delta, r.per_step);
        out += "\n  evidence:\n";
        for (const auto& e : d.verdict.evidence) out += fmt::format("    - {}\n", e);
        out += "  advice:\n";
        for (const auto& a : d.verdict.advice) out += fmt::format("    - {}\n", a);
        if (d.series.size() > 1) {
            out += fmt::format("  series ({} tables: {}):\n", d.series.size(), points_text(d));
            out += series_text(d, "    ");
        }
        if (!d.notes.empty()) {
            out += "  notes:\n";
            for (const auto& n : d.notes) out += fmt::format("    - {}\n", n);
        }
    }
    return out;
}

std::string render_stats_diff_markdown(const analysis::StatsDiff& diff) {
    std::string out;
    for (const auto& d : diff.devices) {
        if (!out.empty()) out += "\n";
        out += fmt::format("### GPU memory: **{}** ({}, {})\n\n", analysis::to_string(d.verdict.verdict),
                           device_label(d), steps_text(diff));
        out += "| metric | before | after | delta | per step |\n|---|---:|---:|---:|---:|\n";
        for (const auto& r : key_rows(d))
            out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.metric, r.before, r.after, r.delta, r.per_step);
        out += "\n**Evidence**\n\n";
        for (const auto& e : d.verdict.evidence) out += fmt::format("- {}\n", e);
        out += "\n**Advice**\n\n";
        for (const auto& a : d.verdict.advice) out += fmt::format("- {}\n", a);
        if (d.series.size() > 1) {
            out += fmt::format("\n**Series** ({} tables: {})\n\n", d.series.size(), points_text(d));
            out += series_text(d, "- ");
        }
        if (!d.notes.empty()) {
            out += "\n**Notes**\n\n";
            for (const auto& n : d.notes) out += fmt::format("- {}\n", n);
        }
    }
    out += fmt::format("\n<sub>memory_summary values are truncated to their unit; ranges show what the "
                       "tables allow ({} → {}).</sub>\n",
                       stats::to_string(diff.before_kind), stats::to_string(diff.after_kind));
    return out;
}

}  // namespace memsnap::report
