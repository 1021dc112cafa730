// Markdown writer for the summary/stats diff.
#include "format.hpp"
#include "markdown_support.hpp"
#include "stats_rows.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

std::string stats_diff_markdown(const analysis::StatsDiff& diff) {
    std::string out;
    for (const auto& d : diff.devices) {
        if (!out.empty()) out += "\n";
        out += fmt::format("### GPU memory: **{}** ({}, steps {})\n\n", analysis::to_string(d.verdict.verdict),
                           util::device_name(d.device), steps_text(diff.steps));
        out += fmt::format("Same process: {}.\n\n", md::one_line(same_process_text(diff.same_process)));
        out += fmt::format("| metric | before | after | delta | {} |\n|---|---:|---:|---:|---:|\n",
                           util::per_unit(diff.steps.known()));
        for (const auto& r : key_rows(d))
            out += fmt::format("| `{}` | {} | {} | {} | {} |\n", r.metric, r.before, r.after, r.delta, r.per_step);
        out += "\n**Evidence**\n\n";
        md::bullets(out, d.verdict.evidence);
        out += "\n**Advice**\n\n";
        md::bullets(out, d.verdict.advice);
        if (d.series.size() > 1) {
            out += fmt::format("\n**Series** ({} tables: {})\n\n", d.series.size(), points_text(d));
            md::bullets(out, series_lines(d));
        }
        if (!d.notes.empty()) {
            out += "\n**Notes**\n\n";
            md::bullets(out, d.notes);
        }
    }
    out += fmt::format(
        "\n<sub>memory_summary values are truncated to their unit; ranges show what the tables allow ({} → "
        "{}).</sub>\n",
        stats::to_string(diff.before_kind), stats::to_string(diff.after_kind));
    return out;
}

}  // namespace memsnap::report::detail
