// Markdown writers for `trend` and `ranks`: for bug reports and CI summaries.
#include "format.hpp"
#include "markdown_support.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

std::string trend_markdown(const analysis::TrendResult& t, const RenderOptions&) {
    std::string out = fmt::format("## memsnap trend: **{}** over {} captures\n\n", t.verdict, t.steps.size());
    out += fmt::format("- **Steps:** {} → {} ({})\n", t.steps.front(), t.steps.back(), t.steps_source);
    md::bullets(out, t.evidence);
    out += "\n| total | first | last | slope | R² | not down | verdict |\n|---|---:|---:|---:|---:|---:|---|\n";
    for (const auto* group : {&t.totals, &t.categories})
        for (const auto& s : *group)
            out += fmt::format("| {} | {} | {} | {} | {:.2f} | {:.0f}% | {} |\n", s.name,
                               util::human_bytes(s.bytes.front()), util::human_bytes(s.bytes.back()),
                               util::rate(s.fit.slope_bytes_per_step, t.steps_known), s.fit.r2,
                               100 * s.fit.monotonic_share, s.fit.verdict);
    if (t.kind == "snapshot") {
        out += fmt::format(
            "\n### Sites ({} of {})\n\n| # | verdict | slope | R² | first | last | site | category |\n"
            "|---:|---|---:|---:|---:|---:|---|---|\n",
            t.sites.size(), t.sites_total);
        for (const auto& s : t.sites)
            out += fmt::format("| {} | {} | {} | {:.2f} | {} | {} | {} | {} |\n", s.rank, s.fit.verdict,
                               util::rate(s.fit.slope_bytes_per_step, t.steps_known), s.fit.r2,
                               util::human_bytes(s.bytes_by_step.front()), util::human_bytes(s.bytes_by_step.back()),
                               md::cell(md::code(site_label(s.site))), analysis::to_string(s.category));
        for (const auto& s : t.sites)
            if (!s.diagnosis.empty())
                out += fmt::format("\n**#{} {}:** {} **Fix:** {}\n", s.rank, md::one_line(site_label(s.site)),
                                   md::one_line(s.diagnosis.summary), md::one_line(s.diagnosis.fix));
    }
    if (!t.notes.empty()) {
        out += "\n";
        md::bullets(out, t.notes);
    }
    return out;
}

std::string ranks_markdown(const analysis::RanksResult& r, const RenderOptions&) {
    std::string out = fmt::format("## memsnap ranks: {} of {} ranks stand out\n\n", r.outliers.size(), r.ranks.size());
    out += fmt::format("Median rank: allocated {}, reserved {}; noise ±{}.\n\n",
                       util::human_bytes(r.median.allocated_bytes), util::human_bytes(r.median.reserved_bytes),
                       util::human_bytes(r.noise_bytes));
    out += "| rank | allocated | vs median | reserved | file |\n|---:|---:|---:|---:|---|\n";
    for (const auto& k : r.ranks)
        out += fmt::format("| {} | {} | {} | {} | {} |\n", k.rank, util::human_bytes(k.totals.allocated_bytes),
                           util::signed_bytes(k.totals.allocated_bytes - r.median.allocated_bytes),
                           util::human_bytes(k.totals.reserved_bytes), md::cell(md::code(k.file)));
    for (const auto& o : r.outliers) {
        out += fmt::format(
            "\n### Rank {}: {} against the median\n\n| delta | here | median | site | category |\n"
            "|---:|---:|---:|---|---|\n",
            o.rank, util::signed_bytes(o.delta_bytes));
        for (const auto& s : o.sites)
            out += fmt::format("| {} | {} | {} | {} | {} |\n", util::signed_bytes(s.delta_bytes),
                               util::human_bytes(s.bytes), util::human_bytes(s.median_bytes),
                               md::cell(md::code(site_label(s.site))), analysis::to_string(s.category));
    }
    if (!r.notes.empty()) {
        out += "\n";
        md::bullets(out, r.notes);
    }
    return out;
}

}  // namespace memsnap::report::detail
