// Markdown writer for `trace`: for bug reports and CI summaries.
#include "format.hpp"
#include "markdown_support.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::detail {

namespace {

void usage_table(std::string& out, const analysis::MomentUsage& usage) {
    out += "\n| # | bytes | allocations | site | category |\n|---:|---:|---:|---|---|\n";
    for (const auto& s : usage.sites)
        out += fmt::format("| {} | {} | {} | {} | {} |\n", s.rank, util::human_bytes(s.bytes), s.allocations,
                           md::cell(md::code(site_label(s.site))), analysis::to_string(s.category));
}

}  // namespace

std::string trace_markdown(const analysis::TraceResult& t, const RenderOptions& options) {
    std::string out = fmt::format("## memsnap trace: {} (device {})\n\n", md::one_line(t.file), t.device);
    out += fmt::format("- **{}:** {}{}\n", t.ordered() ? "Events" : "Allocations", t.events,
                       t.truncated ? " (ring buffer truncated)" : "");
    out += fmt::format("- **Iterations:** {} ({})\n", t.iterations, t.iteration_source);
    if (t.ordered())
        out += fmt::format("- **Peak:** {} allocated at event {}\n", util::human_bytes(t.peak.bytes), t.peak.event);
    else
        out += "- **Source:** block history (no trace events)\n";
    md::bullets(out, t.truncation_evidence);
    md::bullets(out, t.disagreements);

    if (t.ordered()) {
        out += "\n### At the peak\n";
        usage_table(out, t.peak.usage);
    }

    for (const auto& o : t.ooms) {
        out += fmt::format(
            "\n### Out of memory: **{}**\n\nRequested {}, {} free on the device, {} allocated, {} "
            "reserved, largest free block {}.\n",
            o.classification, util::human_bytes(o.requested_bytes), util::human_bytes(o.device_free_bytes),
            util::human_bytes(o.allocated_bytes), util::human_bytes(o.reserved_bytes),
            util::human_bytes(o.largest_free_block_bytes));
        if (o.frame) out += fmt::format("\nAt {}.\n", md::code(frame_label(*o.frame)));
        out += "\n";
        md::bullets(out, o.evidence);
        for (const auto& a : o.advice) out += fmt::format("\n**Fix:** {}\n", md::one_line(a));
        usage_table(out, o.usage);
    }

    out += fmt::format(
        "\n### Live at the end ({} of {} sites)\n\n| # | verdict | bytes | allocations | per iteration | site |\n"
        "|---:|---|---:|---:|---|---|\n",
        t.sites.size(), t.sites_total);
    for (const auto& s : t.sites) {
        const std::string per = run_lengths(s.per_iteration);
        out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", s.rank, s.verdict, util::human_bytes(s.live_bytes),
                           s.live_allocations, per.empty() ? "-" : per, md::cell(md::code(site_label(s.site))));
    }
    for (const auto& s : t.sites) {
        if (s.stacks.empty() || s.stacks.front().frames.empty()) continue;
        out += fmt::format("\n<details><summary>#{} {}</summary>\n\n", s.rank, md::html(site_label(s.site)));
        std::string body;
        for (const auto& line : stack_lines(s.stacks.front(), t.frame_table, options.cpp_frames, 0))
            body += line + "\n";
        out += md::fence(body) + "\n</details>\n";
    }
    if (!t.notes.empty()) {
        out += "\n";
        md::bullets(out, t.notes);
    }
    return out;
}

}  // namespace memsnap::report::detail
