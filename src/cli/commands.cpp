#include "commands.hpp"

#include <memsnap/analysis/snapshot_diff.hpp>
#include <memsnap/analysis/stats_diff.hpp>
#include <memsnap/analysis/summary.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/report/snapshot_diff.hpp>
#include <memsnap/report/snapshot_info.hpp>
#include <memsnap/report/stats_diff.hpp>
#include <memsnap/report/stats_info.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/parse.hpp>
#include <memsnap/util/steps.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <variant>

#include <unistd.h>

#include <cstdlib>

namespace memsnap::cli {

bool use_color(const GlobalOptions& globals) {
    if (globals.color == "never") return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    if (globals.color == "always") return true;
    return ::isatty(STDOUT_FILENO) == 1;
}

namespace {

// A capture is a snapshot (pickle or JSON dump) or memory_summary/memory_stats text;
// the content decides, never the file extension.
using Capture = std::variant<snapshot::Snapshot, stats::StatsCapture>;

Capture load_capture(const std::string& path, const GlobalOptions& globals) {
    const io::MappedFile file(path);
    if (snapshot::looks_like_snapshot(file.bytes())) {
        snapshot::LoadOptions load;
        load.limits = globals.limits;
        return snapshot::load_snapshot(file, load);
    }
    return stats::parse_stats_text(file.bytes(), path);
}

}  // namespace

CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals) {
    const auto capture = load_capture(options.file, globals);
    CommandOutput out;
    if (const auto* snap = std::get_if<snapshot::Snapshot>(&capture)) {
        const auto summary = analysis::summarize(*snap, globals.rules, options.top);
        out.text = options.format == "json" ? report::render_snapshot_info_json(summary)
                                            : report::render_snapshot_info_text(summary);
    } else {
        const auto& stats = std::get<stats::StatsCapture>(capture);
        out.text = options.format == "json" ? report::render_stats_info_json(stats)
                                            : report::render_stats_info_text(stats);
    }
    return out;
}

CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals) {
    // Option values are checked before any file is read: a usage error costs nothing.
    const auto steps = util::resolve_steps(options.steps, options.before, options.after);
    std::int64_t gate = -1;  // bytes per step; -1: no gate
    if (!options.fail_on_growth.empty()) gate = util::parse_size(options.fail_on_growth);
    const std::int64_t min_growth = options.min_growth.empty() ? 0 : util::parse_size(options.min_growth);

    const auto before = load_capture(options.before, globals);
    const auto after = load_capture(options.after, globals);
    CommandOutput out;
    const auto* snap_before = std::get_if<snapshot::Snapshot>(&before);
    const auto* snap_after = std::get_if<snapshot::Snapshot>(&after);
    if ((snap_before == nullptr) != (snap_after == nullptr))
        throw usage_error(fmt::format(
            "cannot diff a snapshot against a memory_summary/memory_stats capture ({} is a {}, {} "
            "is a {}); give two of the same kind",
            options.before, snap_before ? "snapshot" : "summary", options.after,
            snap_after ? "snapshot" : "summary"));

    if (snap_before != nullptr) {
        analysis::SnapshotDiffOptions diff_options;
        diff_options.steps = steps.steps;
        diff_options.device = options.device;
        diff_options.hide = options.hide;
        diff_options.focus = options.focus;
        diff_options.function_granularity = options.granularity == "function";
        diff_options.rules = globals.rules;
        auto diff = analysis::diff_snapshots(*snap_before, *snap_after, diff_options);
        diff.steps_source = steps.source;
        report::DiffRenderOptions render;
        // Machine formats list every site unless --top is given, so their deltas add up.
        render.top = options.top.value_or(options.format == "json" || options.format == "csv" ? 0 : 10);
        render.min_growth = min_growth;
        render.color = options.format == "text" && use_color(globals);
        if (options.format == "json") out.text = report::render_snapshot_diff_json(diff, render);
        else if (options.format == "markdown") out.text = report::render_snapshot_diff_markdown(diff, render);
        else if (options.format == "csv") out.text = report::render_snapshot_diff_csv(diff, render);
        else if (options.format == "folded") out.text = report::render_snapshot_diff_folded(diff, render);
        else out.text = report::render_snapshot_diff_text(diff, render);
        if (gate >= 0)
            if (auto message = analysis::check_growth_gate(diff, gate)) out.gate_message = *message;
        return out;
    }

    if (options.format == "folded")
        throw usage_error("--format folded needs two snapshots: summaries and stats have no stacks");
    auto stats_before = std::get<stats::StatsCapture>(before);
    auto stats_after = std::get<stats::StatsCapture>(after);
    if (options.device) {
        // Tables that name another device are dropped; a stats dict without a device stays.
        for (auto* capture : {&stats_before, &stats_after}) {
            std::erase_if(capture->tables, [&](const stats::StatsTable& t) {
                return t.device.has_value() && *t.device != *options.device;
            });
            if (capture->tables.empty())
                throw usage_error(fmt::format("--device {}: {} has no table for that device",
                                              *options.device,
                                              capture == &stats_before ? options.before : options.after));
        }
    }
    const auto diff = analysis::diff_stats(stats_before, stats_after, steps.steps);
    out.text = report::render_stats_diff(diff, options.format);
    if (gate >= 0)
        if (auto message = analysis::check_growth_gate(diff, gate)) out.gate_message = *message;
    return out;
}

}  // namespace memsnap::cli
