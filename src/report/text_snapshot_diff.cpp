// Text writer for the snapshot diff, for a terminal.
#include "format.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

namespace {

using analysis::SnapshotDiff;

void header(std::string& out, const SnapshotDiff& d, const Style& st) {
    out += fmt::format("{} {} -> {}\n", st.bold("memsnap diff"), util::printable(d.before_file),
                       util::printable(d.after_file));
    out += fmt::format("steps         {}\n", steps_text(d.steps));
    out += fmt::format("same process  {}\n", same_process_text(d.same_process));
    out += d.devices.differ() ? fmt::format("devices       {} before, {} after\n", device_list(d.devices.before),
                                            device_list(d.devices.after))
                              : fmt::format("devices       {}\n", device_list(d.devices.after));
    const bool per_step = d.steps.known();
    out += fmt::format(
        "\nVerdict: {}  (allocated {}, reserved {})\n", st.verdict(analysis::to_string(d.verdict.verdict)),
        util::rate(d.totals.allocated.per_step, per_step), util::rate(d.totals.reserved.per_step, per_step));
    for (const auto& e : d.verdict.evidence) out += fmt::format("  - {}\n", util::printable(e));
    for (const auto& e : d.same_process.evidence) out += fmt::format("  - same process: {}\n", util::printable(e));
    for (const auto& a : d.verdict.advice) out += fmt::format("  advice: {}\n", a);
}

void totals(std::string& out, const SnapshotDiff& d) {
    out += fmt::format("\n{:<22}{:>14}{:>14}{:>15}{:>16}\n", "Totals", "before", "after", "delta",
                       util::per_unit(d.steps.known()));
    for (const auto& field : analysis::TotalsChange::fields()) {
        const auto& t = d.totals.*field.member;
        out += fmt::format("  {:<20}{:>14}{:>14}{:>15}{:>16}\n", field.name, util::human_bytes(t.before),
                           util::human_bytes(t.after), util::signed_bytes(t.delta), util::rate_value(t.per_step));
    }
    out += fmt::format("  live blocks: {} before, {} after ({} survivors, {} new, {} gone)\n", d.live_blocks_before,
                       d.live_blocks_after, d.survivors, d.new_blocks, d.gone_blocks);
    out += fmt::format("\n{:<22}{:>14}{:>14}{:>15}\n", "Categories", "before", "after", "delta");
    for (const auto c : analysis::all_categories()) {
        const auto& cc = d.categories[static_cast<std::size_t>(c)];
        if (cc.before_blocks == 0 && cc.after_blocks == 0) continue;
        out += fmt::format("  {:<20}{:>14}{:>14}{:>15}\n", analysis::to_string(c), util::human_bytes(cc.before_bytes),
                           util::human_bytes(cc.after_bytes), util::signed_bytes(cc.delta_bytes()));
    }
}

void diagnosis(std::string& out, const SnapshotDiff& d, const Style& st) {
    if (!d.overall.empty()) {
        out += fmt::format("\n{} {}\n", st.bold("Diagnosis:"), util::printable(d.overall.summary));
        if (!d.overall.fix.empty()) out += fmt::format("  fix: {}\n", d.overall.fix);
        for (const auto& e : d.overall.evidence) out += fmt::format("  - {}\n", util::printable(e));
    }
    if (d.convergence)
        out += fmt::format("Growth converges in {} ({:.0f}% of the growth, {} sites below it)\n",
                           frame_label(d.convergence->frame), d.convergence->share * 100, d.convergence->sites);
}

void site(std::string& out, const analysis::SiteChange& s, const SnapshotDiff& d, const Style& st,
          const RenderOptions& options) {
    out += fmt::format("\n#{:<3} {:>18}  {:<13} {}  [{}]\n", s.rank,
                       util::rate(s.growth_bytes_per_step, d.steps.known()), st.verdict(analysis::to_string(s.verdict)),
                       st.bold(site_label(s.site)), analysis::to_string(s.category));
    out +=
        fmt::format("      {} blocks ({} new, {} gone, {} survivors): {} -> {}, {}", util::signed_count(s.delta_blocks),
                    s.new_blocks, s.gone_blocks, s.survivor_blocks, util::human_bytes(s.before_bytes),
                    util::human_bytes(s.after_bytes), util::signed_bytes(s.delta_bytes));
    if (s.share) out += fmt::format(", {}% of the growth", util::percent(*s.share));
    out += "\n";
    if (!s.diagnosis.empty()) {
        out += fmt::format("      {}\n", util::printable(s.diagnosis.summary));
        if (!s.diagnosis.fix.empty()) out += fmt::format("      fix: {}\n", s.diagnosis.fix);
    }
    for (const auto& stack : s.stacks) {
        if (stack.delta_blocks == 0) continue;  // unchanged stacks say nothing here
        out += fmt::format("      stack ({} x {}):\n", util::signed_count(stack.delta_blocks),
                           util::human_bytes(stack.size));
        for (const auto& line : stack_lines(stack, d.frame_table, options.cpp_frames, 8))
            out += fmt::format("        {}\n", line);
    }
}

}  // namespace

std::string snapshot_diff_text(const SnapshotDiff& d, const RenderOptions& options) {
    const Style st{options.color};
    std::string out;
    header(out, d, st);
    totals(out, d);
    diagnosis(out, d, st);
    const std::size_t hidden = d.sites_beyond_top + d.sites_below_min_growth;
    std::string why;
    if (d.sites_beyond_top) why += fmt::format(", {} beyond --top (--top 0 lists all)", d.sites_beyond_top);
    if (d.sites_below_min_growth) why += fmt::format(", {} below --min-growth", d.sites_below_min_growth);
    out +=
        fmt::format("\n{} ({} of {} sites{})\n",
                    st.bold(d.steps.known() ? "Sites ranked by growth per step" : "Sites ranked by growth per capture"),
                    d.sites_total - hidden, d.sites_total, why);
    for (const auto& s : d.sites) site(out, s, d, st, options);
    if (!d.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& n : d.notes) out += fmt::format("  - {}\n", util::printable(n));
    }
    return out;
}

}  // namespace memsnap::report::detail
