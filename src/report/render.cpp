#include "writers.hpp"

#include <memsnap/error.hpp>

#include <fmt/format.h>

namespace memsnap::report {

namespace {

constexpr std::pair<Format, std::string_view> kNames[] = {
    {Format::text, "text"},     {Format::json, "json"},   {Format::markdown, "markdown"}, {Format::csv, "csv"},
    {Format::folded, "folded"}, {Format::jsonl, "jsonl"}, {Format::svg, "svg"},           {Format::dot, "dot"},
    {Format::html, "html"},     {Format::pprof, "pprof"},
};

Error unsupported(Format format, std::string_view what) {
    return usage_error(fmt::format("--format {} is not available for {}", to_string(format), what));
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
    for (const auto& [format, text] : kNames)
        if (text == name) return format;
    return std::nullopt;
}

std::string_view to_string(Format format) {
    for (const auto& [f, text] : kNames)
        if (f == format) return text;
    return "text";
}

std::string render(const analysis::InfoResult& result, Format format, const RenderOptions& options) {
    if (const auto* snap = std::get_if<analysis::SnapshotInfo>(&result)) {
        if (format == Format::text) return detail::snapshot_info_text(*snap, options);
        if (format == Format::json) return detail::snapshot_info_json(*snap);
        throw unsupported(format, "info (text, json)");
    }
    const auto& stats = std::get<analysis::StatsInfo>(result);
    if (format == Format::text) return detail::stats_info_text(stats);
    if (format == Format::json) return detail::stats_info_json(stats);
    throw unsupported(format, "info (text, json)");
}

std::string render(const analysis::DiffResult& result, Format format, const RenderOptions& options) {
    if (const auto* snap = std::get_if<analysis::SnapshotDiff>(&result)) {
        switch (format) {
            case Format::text:
                return detail::snapshot_diff_text(*snap, options);
            case Format::json: {
                std::string out;
                detail::snapshot_diff_json(*snap, [&out](std::string_view piece) { out += piece; });
                return out;
            }
            case Format::markdown:
                return detail::snapshot_diff_markdown(*snap, options);
            case Format::csv:
                return detail::snapshot_diff_csv(*snap);
            case Format::folded:
            case Format::svg:
            case Format::dot:
            case Format::pprof:
                return render(analysis::diff_stacks(*snap), format, options);
            case Format::html:
                return detail::snapshot_diff_html(*snap, analysis::diff_stacks(*snap), options);
            default:
                break;
        }
        throw unsupported(format, "diff (text, json, markdown, csv, folded)");
    }
    const auto& stats = std::get<analysis::StatsDiff>(result);
    switch (format) {
        case Format::text:
            return detail::stats_diff_text(stats);
        case Format::json:
            return detail::stats_diff_json(stats);
        case Format::markdown:
            return detail::stats_diff_markdown(stats);
        case Format::csv:
            return detail::stats_diff_csv(stats);
        default:
            break;
    }
    throw unsupported(format, "summaries and stats, which have no stacks (folded needs two snapshots)");
}

std::string render(const analysis::TrendResult& result, Format format, const RenderOptions& options) {
    switch (format) {
        case Format::text:
            return detail::trend_text(result, options);
        case Format::json:
            return detail::trend_json(result);
        case Format::markdown:
            return detail::trend_markdown(result, options);
        case Format::csv:
            return detail::trend_csv(result);
        default:
            break;
    }
    throw unsupported(format, "trend (text, json, markdown, csv)");
}

std::string render(const analysis::RanksResult& result, Format format, const RenderOptions& options) {
    switch (format) {
        case Format::text:
            return detail::ranks_text(result, options);
        case Format::json:
            return detail::ranks_json(result);
        case Format::markdown:
            return detail::ranks_markdown(result, options);
        case Format::csv:
            return detail::ranks_csv(result);
        default:
            break;
    }
    throw unsupported(format, "ranks (text, json, markdown, csv)");
}

std::string render(const analysis::StackProfile& profile, Format format, const RenderOptions& options) {
    switch (format) {
        case Format::folded:
            return detail::profile_folded(profile, options.side);
        case Format::svg:
            return detail::profile_svg(profile, options.side);
        case Format::dot:
            return detail::profile_dot(profile, options.side, options.node_fraction);
        case Format::pprof:
            return detail::profile_pprof(profile);
        default:
            break;
    }
    throw unsupported(format, "stack pictures (folded, svg, dot, pprof)");
}

std::string render_html(const analysis::SnapshotDiff& diff, const analysis::StackProfile& profile,
                        const RenderOptions& options) {
    return detail::snapshot_diff_html(diff, profile, options);
}
std::string render_html(const analysis::SnapshotInfo& info, const analysis::StackProfile& profile) {
    return detail::snapshot_info_html(info, profile);
}
std::string render_html(const analysis::TraceResult& trace, const analysis::StackProfile& profile,
                        const RenderOptions& options) {
    return detail::trace_html(trace, profile, options);
}
std::string render_html(const analysis::TrendResult& trend) { return detail::trend_html(trend); }
std::string render_timeline_svg(const analysis::TraceResult& trace) { return detail::trace_timeline_svg(trace); }
std::string render_timeline_svg(const analysis::TrendResult& trend) { return detail::trend_svg(trend); }

std::string render_jsonl(const analysis::InfoResult& result, const JsonlContext& context) {
    return detail::info_jsonl(result, context);
}

std::string render(const analysis::TraceResult& result, Format format, const RenderOptions& options) {
    switch (format) {
        case Format::text:
            return detail::trace_text(result, options);
        case Format::json:
            return detail::trace_json(result);
        case Format::markdown:
            return detail::trace_markdown(result, options);
        case Format::csv:
            return detail::trace_csv(result);
        default:
            break;
    }
    throw unsupported(format, "trace (text, json, markdown, csv, html, svg, folded, dot, pprof)");
}

void write(const analysis::DiffResult& result, Format format, const RenderOptions& options, const Sink& sink) {
    if (const auto* snap = std::get_if<analysis::SnapshotDiff>(&result); snap && format == Format::json) {
        detail::snapshot_diff_json(*snap, sink);
        return;
    }
    sink(render(result, format, options));
}

namespace {

// Formats drawn from stacks: folded stacks, flame graph, call graph, pprof.
bool stack_picture(Format f) {
    return f == Format::folded || f == Format::svg || f == Format::dot || f == Format::pprof;
}

const analysis::StackProfile& stacks_of(const analysis::Result& result) {
    if (!result.stacks) throw usage_error("this output needs stacks, which the analysis did not keep");
    return *result.stacks;
}

void write_infos(const std::vector<analysis::InfoResult>& infos, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (stack_picture(format)) return sink(render(stacks_of(result), format, options));
    if (format == Format::html) {
        const auto* snap = infos.empty() ? nullptr : std::get_if<analysis::SnapshotInfo>(&infos.front());
        if (!snap) throw unsupported(format, "info of a memory_summary or memory_stats capture");
        return sink(render_html(*snap, stacks_of(result)));
    }
    for (std::size_t i = 0; i < infos.size(); ++i) {
        if (i) sink("\n");
        sink(render(infos[i], format, options));
    }
}

void write_diff(const analysis::DiffResult& diff, const analysis::Result& result, Format format,
                const RenderOptions& options, const Sink& sink) {
    const auto* snap = std::get_if<analysis::SnapshotDiff>(&diff);
    if (snap && stack_picture(format)) return sink(render(stacks_of(result), format, options));
    if (snap && format == Format::html) return sink(render_html(*snap, stacks_of(result), options));
    write(diff, format, options, sink);
}

void write_trace(const analysis::TraceResult& trace, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (format == Format::svg && !options.flame_svg) return sink(render_timeline_svg(trace));
    if (stack_picture(format)) return sink(render(stacks_of(result), format, options));
    if (format == Format::html) return sink(render_html(trace, stacks_of(result), options));
    sink(render(trace, format, options));
}

void write_trend(const analysis::TrendResult& trend, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (format == Format::svg) return sink(render_timeline_svg(trend));
    if (stack_picture(format)) return sink(render(stacks_of(result), format, options));
    if (format == Format::html) return sink(render_html(trend));
    sink(render(trend, format, options));
}

}  // namespace

analysis::StackNeed stack_need(analysis::Command command, Format format, const RenderOptions& options) {
    using analysis::StackNeed;
    const bool stacks = stack_picture(format);
    switch (command) {
        case analysis::Command::info:
            return format == Format::html ? StackNeed::live : stacks ? StackNeed::live_only : StackNeed::none;
        case analysis::Command::diff:
            if (!stacks && format != Format::html) return StackNeed::none;
            return options.side == analysis::Side::delta ? StackNeed::diff_changed : StackNeed::diff_all;
        case analysis::Command::trace: {
            const bool flame = stacks && !(format == Format::svg && !options.flame_svg);
            if (!flame && format != Format::html) return StackNeed::none;
            return options.at_end ? StackNeed::trace_end : StackNeed::trace_peak;
        }
        case analysis::Command::trend:
            return stacks && format != Format::svg ? StackNeed::sites : StackNeed::none;
        case analysis::Command::ranks:
            return stacks ? StackNeed::sites : StackNeed::none;
    }
    return StackNeed::none;
}

void write(const analysis::Result& result, Format format, const RenderOptions& options, const Sink& sink) {
    std::visit(
        [&](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, std::vector<analysis::InfoResult>>)
                write_infos(value, result, format, options, sink);
            else if constexpr (std::is_same_v<T, analysis::DiffResult>)
                write_diff(value, result, format, options, sink);
            else if constexpr (std::is_same_v<T, analysis::TraceResult>)
                write_trace(value, result, format, options, sink);
            else if constexpr (std::is_same_v<T, analysis::TrendResult>)
                write_trend(value, result, format, options, sink);
            else if (stack_picture(format))
                sink(render(stacks_of(result), format, options));
            else
                sink(render(value, format, options));
        },
        result.value);
}

}  // namespace memsnap::report
