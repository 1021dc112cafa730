// Markdown writer for the snapshot diff: ready to paste into a GitHub issue.
#include "format.hpp"
#include "markdown_support.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

namespace {

using analysis::SnapshotDiff;

void diagnosis_block(std::string& out, const analysis::Diagnosis& d) {
    if (!d.summary.empty()) out += fmt::format("{}\n", md::one_line(d.summary));
    if (!d.pattern.empty()) out += fmt::format("\nPattern: {}\n", md::code(d.pattern));
    if (!d.fix.empty()) out += fmt::format("\n**Fix:** {}\n", md::one_line(d.fix));
    if (!d.evidence.empty()) {
        out += "\nEvidence:\n\n";
        md::bullets(out, d.evidence);
    }
}

void stack_block(std::string& out, const analysis::RepresentativeStack& s,
                 const std::vector<analysis::FrameText>& table, std::size_t index, bool cpp_frames) {
    out += fmt::format("\nStack {}: {} blocks of {} ({})\n\n", index, util::signed_count(s.delta_blocks),
                       util::human_bytes(s.size), util::signed_bytes(s.delta_bytes));
    std::string body;
    for (const auto& line : stack_lines(s, table, cpp_frames, 0)) body += line + "\n";
    if (s.frames.empty()) body = "(no frames)\n";
    out += md::fence(body);
}

void header(std::string& out, const SnapshotDiff& d) {
    out += fmt::format("## memsnap diff: {} → {}\n\n", md::one_line(d.before_file), md::one_line(d.after_file));
    out += fmt::format("Steps: {}. Same process: {}. Devices: {}.\n\n", steps_text(d.steps),
                       md::one_line(same_process_text(d.same_process)),
                       d.devices.differ() ? fmt::format("{} before, {} after", device_list(d.devices.before),
                                                        device_list(d.devices.after))
                                          : device_list(d.devices.after));
    out += fmt::format("**Verdict: {}**\n\n", analysis::to_string(d.verdict.verdict));
    md::bullets(out, d.verdict.evidence);
    if (!d.verdict.advice.empty()) {
        out += "\nAdvice:\n\n";
        md::bullets(out, d.verdict.advice);
    }
}

void totals(std::string& out, const SnapshotDiff& d) {
    out += fmt::format("\n| metric | before | after | delta | {} |\n", util::per_unit(d.steps.known()));
    out += "|---|---:|---:|---:|---:|\n";
    for (const auto& field : analysis::TotalsChange::fields()) {
        const auto& t = d.totals.*field.member;
        out += fmt::format("| {} | {} | {} | {} | {} |\n", field.name, util::human_bytes(t.before),
                           util::human_bytes(t.after), util::signed_bytes(t.delta), util::rate_value(t.per_step));
    }
    out += fmt::format("\nLive blocks: {} → {} ({} survived, {} new, {} gone).\n", d.live_blocks_before,
                       d.live_blocks_after, d.survivors, d.new_blocks, d.gone_blocks);
    out += "\n| category | before | after | delta |\n|---|---:|---:|---:|\n";
    for (const auto c : analysis::all_categories()) {
        const auto& cc = d.categories[static_cast<std::size_t>(c)];
        if (cc.before_blocks == 0 && cc.after_blocks == 0) continue;
        out += fmt::format("| {} | {} | {} | {} |\n", analysis::to_string(c), util::human_bytes(cc.before_bytes),
                           util::human_bytes(cc.after_bytes), util::signed_bytes(cc.delta_bytes()));
    }
}

void site_table(std::string& out, const SnapshotDiff& d) {
    out += "\n### Sites\n\n";
    if (d.sites_total == 0) {
        out += "No live blocks in either capture.\n";
    } else if (d.sites.empty()) {
        out += "No site passes the filters.\n";
    } else {
        out += fmt::format(
            "| rank | site | category | verdict | Δ bytes | Δ blocks | new | gone | growth/{} | share % |\n",
            d.steps.known() ? "step" : "capture");
        out += "|---:|---|---|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& s : d.sites)
            out += fmt::format(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", s.rank, md::cell(md::code(site_label(s.site))),
                analysis::to_string(s.category), analysis::to_string(s.verdict), util::signed_bytes(s.delta_bytes),
                util::signed_count(s.delta_blocks), s.new_blocks, s.gone_blocks,
                util::rate_value(s.growth_bytes_per_step), s.share ? util::percent(*s.share) : std::string("—"));
    }
    const std::size_t hidden = d.sites_beyond_top + d.sites_below_min_growth;
    if (hidden == 0) return;
    std::string why;
    if (d.sites_beyond_top != 0) why += fmt::format("{} beyond --top", d.sites_beyond_top);
    if (d.sites_below_min_growth != 0)
        why += fmt::format("{}{} below --min-growth", why.empty() ? "" : ", ", d.sites_below_min_growth);
    out += fmt::format("\n{} more site{} not shown ({}).\n", hidden, hidden == 1 ? "" : "s", why);
}

}  // namespace

std::string snapshot_diff_markdown(const SnapshotDiff& d, const RenderOptions& options) {
    std::string out;
    header(out, d);
    totals(out, d);
    if (!d.overall.empty()) {
        out += "\n### Diagnosis\n\n";
        diagnosis_block(out, d.overall);
    }
    if (d.convergence)
        out += fmt::format(
            "\nGrowth converges in {}: {} inclusive ({}% of all growth) over {} growing sites, {} in the "
            "frame itself.\n",
            md::code(frame_label(d.convergence->frame)), util::signed_bytes(d.convergence->inclusive_bytes),
            util::percent(d.convergence->share), d.convergence->sites,
            util::signed_bytes(d.convergence->exclusive_bytes));
    site_table(out, d);
    for (const auto& s : d.sites) {
        out += fmt::format("\n<details><summary>#{} {} — {}</summary>\n\n", s.rank, md::html(site_label(s.site)),
                           util::rate(s.growth_bytes_per_step, d.steps.known()));
        if (s.diagnosis.empty())
            out += "No diagnosis for this site.\n";
        else
            diagnosis_block(out, s.diagnosis);
        if (s.stacks.empty())
            out += fmt::format("\n{}\n", d.stacks_recorded ? "No representative stack." : "No stacks recorded.");
        for (std::size_t i = 0; i < s.stacks.size(); ++i)
            stack_block(out, s.stacks[i], d.frame_table, i + 1, options.cpp_frames);
        out += "\n</details>\n";
    }
    if (!d.notes.empty()) {
        out += "\n### Notes\n\n";
        md::bullets(out, d.notes);
    }
    return out;
}

}  // namespace memsnap::report::detail
