// Markdown writer for the snapshot diff: ready to paste into a GitHub issue.
// Prints a SnapshotDiff as it is; every figure comes from analysis.
#include <memsnap/report/snapshot_diff.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace memsnap::report {

namespace {

// Sites that pass min_growth, in rank order, and how many `top` then cut.
struct Selection {
    std::vector<const analysis::SiteChange*> shown;
    std::size_t below_min_growth = 0;
    std::size_t beyond_top = 0;
};

Selection select_sites(const analysis::SnapshotDiff& diff, const DiffRenderOptions& options) {
    Selection sel;
    for (const auto& site : diff.sites) {
        if (std::llabs(site.delta_bytes) < options.min_growth) {
            ++sel.below_min_growth;
            continue;
        }
        if (options.top != 0 && sel.shown.size() >= options.top) {
            ++sel.beyond_top;
            continue;
        }
        sel.shown.push_back(&site);
    }
    return sel;
}

std::int64_t rounded(double value) {
    return std::isfinite(value) ? static_cast<std::int64_t>(std::llround(value)) : 0;
}

// One line of text: table cells and summaries cannot hold line breaks.
std::string one_line(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    return out;
}

// A table cell: no line breaks, and `|` would end the cell (GitHub honours `\|` even inside
// code spans in tables).
std::string cell(std::string_view text) {
    std::string out;
    for (const char c : one_line(text)) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

// The longest run of backticks in `text`.
std::size_t longest_backtick_run(std::string_view text) {
    std::size_t longest = 0, run = 0;
    for (const char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

// Inline code that survives backticks in the text.
std::string code(std::string_view text) {
    const std::string fence(longest_backtick_run(text) + 1, '`');
    const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
    return fmt::format("{}{}{}{}{}", fence, pad ? " " : "", text, pad ? " " : "", fence);
}

// Text inside HTML elements (<summary>): "<no stack>" must not become a tag.
std::string html(std::string_view text) {
    std::string out;
    for (const char c : one_line(text)) {
        switch (c) {
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '&': out += "&amp;"; break;
            default: out += c;
        }
    }
    return out;
}

// "+3", "-2", "0": counts with an explicit sign, as signed_bytes does for bytes.
std::string signed_count(std::int64_t n) { return n > 0 ? fmt::format("+{}", n) : fmt::format("{}", n); }

std::string frame_text(const analysis::FrameText& f) {
    return fmt::format("{}:{} {}", f.filename, f.line, f.name);
}

std::string per_unit(const analysis::SnapshotDiff& diff) {
    return diff.steps ? "/step" : "/capture";
}

std::string percent(double share) {
    if (!std::isfinite(share)) return "—";
    const double value = share * 100;
    return fmt::format("{:.1f}", value == 0 ? 0.0 : value);  // no "-0.0"
}

void bullets(std::string& out, const std::vector<std::string>& items) {
    for (const auto& item : items) out += fmt::format("- {}\n", one_line(item));
}

void diagnosis_block(std::string& out, const analysis::Diagnosis& d) {
    if (!d.summary.empty()) out += fmt::format("{}\n", one_line(d.summary));
    if (!d.pattern.empty()) out += fmt::format("\nPattern: {}\n", code(d.pattern));
    if (!d.fix.empty()) out += fmt::format("\n**Fix:** {}\n", one_line(d.fix));
    if (!d.evidence.empty()) {
        out += "\nEvidence:\n\n";
        bullets(out, d.evidence);
    }
}

void stack_block(std::string& out, const analysis::RepresentativeStack& s, std::size_t index) {
    out += fmt::format("\nStack {}: {} blocks of {} ({})\n\n", index, signed_count(s.delta_blocks),
                       util::human_bytes(s.size), util::signed_bytes(s.delta_bytes));
    std::string body;
    for (const auto& f : s.frames) body += one_line(frame_text(f)) + "\n";
    if (s.frames.empty()) body = "(no frames)\n";
    const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
    out += fmt::format("{}\n{}{}\n", fence, body, fence);
}

}  // namespace

std::string render_snapshot_diff_markdown(const analysis::SnapshotDiff& diff, const DiffRenderOptions& options) {
    std::string out;
    const std::string unit = per_unit(diff);

    out += fmt::format("## memsnap diff: {} → {}\n\n", one_line(diff.before_file), one_line(diff.after_file));
    if (diff.steps) {
        const auto [a, b] = *diff.steps;
        out += fmt::format("Steps {} → {} ({} steps apart, from {}); growth is per step.\n\n", a, b, b - a,
                           diff.steps_source.empty() ? std::string("unknown source") : diff.steps_source);
    } else {
        out += "steps unknown: growth is per capture.\n\n";
    }

    // Allocator verdict.
    out += fmt::format("**Allocator verdict: {}**\n\n", analysis::to_string(diff.verdict.verdict));
    bullets(out, diff.verdict.evidence);
    if (!diff.verdict.advice.empty()) {
        out += "\nAdvice:\n\n";
        bullets(out, diff.verdict.advice);
    }

    // Totals, in the order analysis gives them.
    out += fmt::format("\n| metric | before | after | delta | per {} |\n", diff.steps ? "step" : "capture");
    out += "|---|---:|---:|---:|---:|\n";
    for (const auto& [name, t] : diff.totals)
        out += fmt::format("| {} | {} | {} | {} | {} |\n", cell(name), util::human_bytes(t.before),
                           util::human_bytes(t.after), util::signed_bytes(t.delta),
                           util::signed_bytes(rounded(t.per_step)));
    out += fmt::format("\nLive blocks: {} → {} ({} survived, {} new, {} gone).", diff.live_blocks_before,
                       diff.live_blocks_after, diff.survivors, diff.new_blocks, diff.gone_blocks);
    if (diff.pending_free_before != 0 || diff.pending_free_after != 0)
        out += fmt::format(" Pending frees (counted apart): {} → {}.", util::human_bytes(diff.pending_free_before),
                           util::human_bytes(diff.pending_free_after));
    out += "\n";
    if (!diff.stacks_recorded)
        out += "\nNo allocation stacks were recorded: sites are grouped by block size alone.\n";

    // The step-level picture.
    const auto& overall = diff.overall;
    if (!overall.summary.empty() || !overall.fix.empty() || !overall.evidence.empty()) {
        out += "\n### Diagnosis\n\n";
        diagnosis_block(out, overall);
    }
    if (diff.convergence) {
        const auto& c = *diff.convergence;
        out += fmt::format(
            "\nGrowth converges in {}: {} inclusive ({}% of all growth) over {} growing sites, {} in "
            "the frame itself.\n",
            code(one_line(frame_text(c.frame))), util::signed_bytes(c.inclusive_bytes), percent(c.share), c.sites,
            util::signed_bytes(c.exclusive_bytes));
    }

    // Sites.
    const auto sel = select_sites(diff, options);
    out += "\n### Sites\n\n";
    if (diff.sites.empty()) {
        out += "No live blocks in either capture.\n";
    } else if (sel.shown.empty()) {
        out += "No site passes the filters.\n";
    } else {
        out += fmt::format("| rank | site | verdict | Δ bytes | Δ blocks | new | gone | growth{} | share % |\n", unit);
        out += "|---:|---|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto* s : sel.shown)
            out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", s->rank,
                               cell(code(one_line(s->site.label()))), analysis::to_string(s->verdict),
                               util::signed_bytes(s->delta_bytes), signed_count(s->delta_blocks), s->new_blocks,
                               s->gone_blocks, util::signed_bytes(rounded(s->growth_bytes_per_step)),
                               percent(s->share));
    }
    const std::size_t hidden = sel.below_min_growth + sel.beyond_top;
    if (hidden != 0) {
        std::string why;
        if (sel.beyond_top != 0) why += fmt::format("{} beyond the top {}", sel.beyond_top, options.top);
        if (sel.below_min_growth != 0)
            why += fmt::format("{}{} changed by less than {}", why.empty() ? "" : ", ", sel.below_min_growth,
                               util::human_bytes(options.min_growth));
        out += fmt::format("\n{} more site{} not shown ({}).\n", hidden, hidden == 1 ? "" : "s", why);
    }

    for (const auto* s : sel.shown) {
        out += fmt::format("\n<details><summary>#{} {} — {}{}</summary>\n\n", s->rank, html(s->site.label()),
                           util::signed_bytes(rounded(s->growth_bytes_per_step)), unit);
        if (s->diagnosis.summary.empty() && s->diagnosis.fix.empty() && s->diagnosis.evidence.empty())
            out += "No diagnosis for this site.\n";
        else
            diagnosis_block(out, s->diagnosis);
        if (s->stacks.empty())
            out += fmt::format("\n{}\n", diff.stacks_recorded ? "No representative stack." : "No stacks recorded.");
        for (std::size_t i = 0; i < s->stacks.size(); ++i) stack_block(out, s->stacks[i], i + 1);
        out += "\n</details>\n";
    }

    if (!diff.notes.empty()) {
        out += "\n### Notes\n\n";
        bullets(out, diff.notes);
    }
    return out;
}

}  // namespace memsnap::report
