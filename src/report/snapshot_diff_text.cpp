#include <memsnap/report/snapshot_diff.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <cmath>

namespace memsnap::report {

namespace {

struct Style {
    bool color;
    std::string paint(std::string_view code, std::string_view text) const {
        return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
    }
    std::string bold(std::string_view t) const { return paint("1", t); }
    std::string verdict(std::string_view v) const {
        const std::string upper = [&] {
            std::string s(v);
            for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
            return s;
        }();
        if (v == "leak") return paint("1;31", upper);
        if (v == "fragmentation" || v == "cache_growth" || v == "shape_growth") return paint("1;33", upper);
        return paint("1;32", upper);
    }
};

std::string rate(double per_step, bool steps_known) {
    return fmt::format("{}/{}", util::signed_bytes(static_cast<std::int64_t>(std::llround(per_step))),
                       steps_known ? "step" : "capture");
}

}  // namespace

std::string render_snapshot_diff_text(const analysis::SnapshotDiff& diff,
                                      const DiffRenderOptions& options) {
    const Style st{options.color};
    const bool steps_known = diff.steps.has_value();
    std::string out;
    out += fmt::format("{} {} -> {}\n", st.bold("memsnap diff"), diff.before_file, diff.after_file);
    if (steps_known)
        out += fmt::format("steps {} -> {} ({} steps, from {})\n", diff.steps->first,
                           diff.steps->second, diff.steps->second - diff.steps->first,
                           diff.steps_source);
    else
        out += "steps unknown: growth is per capture (give --steps A,B)\n";

    const auto& allocated = diff.total("allocated_bytes");
    out += fmt::format("\nVerdict: {}  (allocated {}, reserved {})\n",
                       st.verdict(analysis::to_string(diff.verdict.verdict)),
                       rate(allocated.per_step, steps_known),
                       rate(diff.total("reserved_bytes").per_step, steps_known));
    for (const auto& e : diff.verdict.evidence) out += fmt::format("  - {}\n", e);
    for (const auto& a : diff.verdict.advice) out += fmt::format("  advice: {}\n", a);

    out += fmt::format("\n{:<22}{:>14}{:>14}{:>15}{:>16}\n", "Totals", "before", "after", "delta",
                       steps_known ? "per step" : "per capture");
    for (const auto& [name, t] : diff.totals)
        out += fmt::format("  {:<20}{:>14}{:>14}{:>15}{:>16}\n", name, util::human_bytes(t.before),
                           util::human_bytes(t.after), util::signed_bytes(t.delta),
                           util::signed_bytes(static_cast<std::int64_t>(std::llround(t.per_step))));
    out += fmt::format("  live blocks: {} before, {} after ({} survivors, {} new, {} gone)\n",
                       diff.live_blocks_before, diff.live_blocks_after, diff.survivors,
                       diff.new_blocks, diff.gone_blocks);

    if (!diff.overall.summary.empty()) {
        out += fmt::format("\n{} {}\n", st.bold("Diagnosis:"), diff.overall.summary);
        if (!diff.overall.fix.empty()) out += fmt::format("  fix: {}\n", diff.overall.fix);
        for (const auto& e : diff.overall.evidence) out += fmt::format("  - {}\n", e);
    }
    if (diff.convergence)
        out += fmt::format("Growth converges in {}:{} {} ({:.0f}% of the growth, {} sites below it)\n",
                           diff.convergence->frame.filename, diff.convergence->frame.line,
                           diff.convergence->frame.name, diff.convergence->share * 100,
                           diff.convergence->sites);

    std::size_t shown = 0, hidden = 0;
    std::string body;
    for (const auto& s : diff.sites) {
        if ((options.top != 0 && shown == options.top) || std::abs(s.delta_bytes) < options.min_growth) {
            ++hidden;
            continue;
        }
        ++shown;
        body += fmt::format("\n#{:<3} {:>18}  {:<13} {}\n", s.rank, rate(s.growth_bytes_per_step, steps_known),
                            st.verdict(analysis::to_string(s.verdict)), st.bold(s.site.label()));
        body += fmt::format("      {:+} blocks ({} new, {} gone, {} survivors): {} -> {}, {}",
                            s.delta_blocks, s.new_blocks, s.gone_blocks, s.survivor_blocks,
                            util::human_bytes(s.before_bytes), util::human_bytes(s.after_bytes),
                            util::signed_bytes(s.delta_bytes));
        if (s.share != 0) body += fmt::format(", {:.1f}% of the growth", s.share * 100);
        body += "\n";
        if (!s.diagnosis.summary.empty()) {
            body += fmt::format("      {}\n", s.diagnosis.summary);
            if (!s.diagnosis.fix.empty()) body += fmt::format("      fix: {}\n", s.diagnosis.fix);
        }
        for (const auto& stack : s.stacks) {
            if (stack.delta_blocks == 0) continue;  // unchanged stacks say nothing here
            body += fmt::format("      stack ({:+} x {}):\n", stack.delta_blocks, util::human_bytes(stack.size));
            const std::size_t limit = 8;
            for (std::size_t i = 0; i < stack.frames.size() && i < limit; ++i) {
                const auto& f = stack.frames[i];
                body += fmt::format("        {}:{} {}\n", f.filename, f.line, f.name);
            }
            if (stack.frames.size() > limit)
                body += fmt::format("        ... {} more frames\n", stack.frames.size() - limit);
        }
    }
    out += fmt::format("\n{} ({} of {} sites{})\n",
                       st.bold(steps_known ? "Sites ranked by growth per step" : "Sites ranked by growth per capture"), shown,
                       diff.sites.size(), hidden ? fmt::format(", {} not shown: --top 0 lists all", hidden) : "");
    out += body;
    if (!diff.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& n : diff.notes) out += fmt::format("  - {}\n", n);
    }
    return out;
}

}  // namespace memsnap::report
