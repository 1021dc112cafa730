// Text writers for `trend` (growth over many captures) and `ranks` (one capture per rank).
#include "format.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

namespace {

std::string fit_text(const analysis::SeriesFit& f, bool steps_known) {
    return fmt::format("{:>16}  R² {:.2f}  {:>3.0f}% not down", util::rate(f.slope_bytes_per_step, steps_known), f.r2,
                       100 * f.monotonic_share);
}

std::string series_line(const analysis::TrendSeries& s, bool steps_known, const Style& st) {
    return fmt::format("  {:<22} {:>12} → {:<12} {}  {}  {}\n", s.name, util::human_bytes(s.bytes.front()),
                       util::human_bytes(s.bytes.back()), sparkline(s.bytes), fit_text(s.fit, steps_known),
                       st.verdict(s.fit.verdict));
}

std::string joined_steps(const std::vector<std::int64_t>& steps) {
    std::string out;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i == 8 && steps.size() > 10) {
            out += fmt::format(", … {} more", steps.size() - 9);
            i = steps.size() - 1;
        }
        out += fmt::format("{}{}", out.empty() ? "" : ", ", steps[i]);
    }
    return out;
}

}  // namespace

std::string trend_text(const analysis::TrendResult& t, const RenderOptions& options) {
    const Style st{options.color};
    std::string out =
        fmt::format("trend of {} {} captures{}\n", t.steps.size(), t.kind == "snapshot" ? "snapshot" : t.kind,
                    t.device ? fmt::format(", device {}", *t.device) : "");
    out += fmt::format("  steps   {} ({}{})\n", joined_steps(t.steps), t.steps_source,
                       t.steps_known ? "" : ": positions, not steps");
    if (t.warmup) out += fmt::format("  warm-up the first {} interval(s) left out of the fit\n", t.warmup);
    out += fmt::format("\n{} {}\n", st.bold("Verdict:"), st.verdict(t.verdict));
    for (const auto& e : t.evidence) out += fmt::format("  - {}\n", util::printable(e));

    out += fmt::format("\n{}\n", st.bold("Totals"));
    for (const auto& s : t.totals) out += series_line(s, t.steps_known, st);
    if (!t.categories.empty()) {
        out += fmt::format("\n{}\n", st.bold("Categories of live memory"));
        for (const auto& s : t.categories) out += series_line(s, t.steps_known, st);
    }
    if (t.kind == "snapshot") {
        out += fmt::format("\n{} ({} of {}, by slope weighted by R² and monotonic share)\n", st.bold("Sites"),
                           t.sites.size(), t.sites_total);
        for (const auto& s : t.sites) {
            out += fmt::format("#{:<3} {}  {:<12} {}  [{}]\n", s.rank, fit_text(s.fit, t.steps_known),
                               st.verdict(s.fit.verdict), site_label(s.site), analysis::to_string(s.category));
            out += fmt::format("      {} {} → {}, blocks {} → {}", sparkline(s.bytes_by_step),
                               util::human_bytes(s.bytes_by_step.front()), util::human_bytes(s.bytes_by_step.back()),
                               s.blocks_by_step.front(), s.blocks_by_step.back());
            if (!s.fit.first_step)
                out += "\n";
            else if (t.steps_known)
                out += fmt::format(", first seen at step {}\n", *s.fit.first_step);
            else
                out += fmt::format(", first seen in capture {}\n", *s.fit.first_step + 1);
            if (!s.diagnosis.empty())
                out += fmt::format("      {}\n      fix: {}\n", util::printable(s.diagnosis.summary),
                                   util::printable(s.diagnosis.fix));
        }
    }
    if (!t.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& n : t.notes) out += fmt::format("  - {}\n", util::printable(n));
    }
    return out;
}

std::string ranks_text(const analysis::RanksResult& r, const RenderOptions& options) {
    const Style st{options.color};
    std::string out = fmt::format("ranks: {} captures (ranks from {})\n", r.ranks.size(), r.rank_source);
    out += fmt::format("  median rank: allocated {}, reserved {}; a rank stands out beyond ±{}\n",
                       util::human_bytes(r.median.allocated_bytes), util::human_bytes(r.median.reserved_bytes),
                       util::human_bytes(r.noise_bytes));
    out += fmt::format("\n{}\n", st.bold("Per rank"));
    for (const auto& k : r.ranks) {
        const std::int64_t delta = k.totals.allocated_bytes - r.median.allocated_bytes;
        out += fmt::format("  rank {:<4} allocated {:>12} ({:>12} vs median)  reserved {:>12}  {}\n", k.rank,
                           util::human_bytes(k.totals.allocated_bytes), util::signed_bytes(delta),
                           util::human_bytes(k.totals.reserved_bytes), util::printable(k.file));
    }
    out += fmt::format("\n{}\n", st.bold(r.outliers.empty() ? "No rank stands out" : "Ranks that stand out"));
    for (const auto& o : r.outliers) {
        out += fmt::format("  rank {}: {} allocated, {} against the median\n", o.rank,
                           util::human_bytes(o.allocated_bytes), util::signed_bytes(o.delta_bytes));
        for (const auto& [category, delta] : o.categories)
            out +=
                fmt::format("    category {:<16} {:>12}\n", analysis::to_string(category), util::signed_bytes(delta));
        for (const auto& s : o.sites)
            out += fmt::format("    site {:>12}  ({} here, median {})  {}  [{}]\n", util::signed_bytes(s.delta_bytes),
                               util::human_bytes(s.bytes), util::human_bytes(s.median_bytes), site_label(s.site),
                               analysis::to_string(s.category));
    }
    if (!r.ranks.empty() && !r.ranks.front().top_sites.empty()) {
        out += fmt::format("\n{}\n", st.bold("Top sites per rank"));
        for (const auto& k : r.ranks)
            for (const auto& s : k.top_sites)
                out += fmt::format("  rank {:<4} {:>12}  {}  [{}]\n", k.rank, util::human_bytes(s.bytes),
                                   site_label(s.site), analysis::to_string(s.category));
    }
    if (!r.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& n : r.notes) out += fmt::format("  - {}\n", util::printable(n));
    }
    return out;
}

}  // namespace memsnap::report::detail
