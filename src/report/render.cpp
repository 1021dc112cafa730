#include "documents/documents.hpp"
#include "documents/phrases.hpp"
#include "pictures/pictures.hpp"
#include "pictures/profile_support.hpp"
#include "writers/writers.hpp"

#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report {

namespace {

constexpr std::pair<Format, std::string_view> kNames[] = {
    {Format::text, "text"},     {Format::json, "json"},   {Format::markdown, "markdown"}, {Format::csv, "csv"},
    {Format::folded, "folded"}, {Format::jsonl, "jsonl"}, {Format::svg, "svg"},           {Format::dot, "dot"},
    {Format::html, "html"},     {Format::pprof, "pprof"}, {Format::perfetto, "perfetto"},
};

Error unsupported(Format format, std::string_view what) {
    return usage_error(fmt::format("--format {} is not available for {}", to_string(format), what));
}

// Formats drawn from stacks: folded stacks, flame graph, call graph, pprof.
bool stack_picture(Format f) {
    return f == Format::folded || f == Format::svg || f == Format::dot || f == Format::pprof;
}

const analysis::StackProfile& stacks_of(const analysis::Result& result, Format format) {
    if (!result.stacks) throw unsupported(format, "this capture, which has no stacks");
    return *result.stacks;
}

// The gate that tripped, in every format's document: which option, and why.
Document gated(Document d, const analysis::Result& result) {
    if (!result.gate) return d;
    auto& gate = d.root.add(Node::object("gate", Layout::section, "Gate"));
    gate.add("option", Value::word(result.gate->option)).in_headline();
    gate.add("result", Value::word(result.gate->tripped ? "tripped" : "not_judged")).in_headline();
    gate.add(doc::facts("reasons", result.gate->reasons));
    return d;
}

void write_document(Document d, Format format, const RenderOptions& options, const Sink& sink,
                    const std::vector<std::string>& pictures = {}, const analysis::Result* result = nullptr) {
    if (result) d = gated(std::move(d), *result);
    switch (format) {
        case Format::text:
            return detail::write_text(d, options, sink);
        case Format::json:
            return detail::write_json(d, sink);
        case Format::markdown:
            return detail::write_markdown(d, options, sink);
        case Format::csv:
            return detail::write_csv(d, sink);
        case Format::html:
            return detail::write_html(d, pictures, options, sink, result && result->view ? &*result->view : nullptr);
        default:
            throw unsupported(format, fmt::format("a {} (text, json, markdown, csv, html)", d.kind));
    }
}

void write_infos(const std::vector<analysis::InfoResult>& infos, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (stack_picture(format)) return sink(render(stacks_of(result, format), format, options));
    if (format == Format::html) {
        const auto& stacks = stacks_of(result, format);
        return write_document(
            document(infos.at(0)), format, options, sink,
            {detail::profile_svg(detail::shown_stacks(stacks, options.cpp_frames), analysis::Side::after)}, &result);
    }
    for (std::size_t i = 0; i < infos.size(); ++i) {
        if (i) sink("\n");
        write_document(document(infos[i]), format, options, sink, {}, &result);
    }
}

void write_diff(const analysis::DiffResult& diff, const analysis::Result& result, Format format,
                const RenderOptions& options, const Sink& sink) {
    if (stack_picture(format)) return sink(render(stacks_of(result, format), format, options));
    std::vector<std::string> pictures;
    if (format == Format::html)
        pictures.push_back(
            detail::profile_svg(detail::shown_stacks(stacks_of(result, format), options.cpp_frames), options.side));
    write_document(document(diff), format, options, sink, pictures, &result);
}

void write_trace(const analysis::TraceResult& trace, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (format == Format::perfetto) return detail::trace_perfetto(trace, sink);
    if (format == Format::svg && !options.flame_svg) return sink(render_timeline_svg(trace));
    if (stack_picture(format)) return sink(render(stacks_of(result, format), format, options));
    std::vector<std::string> pictures;
    if (format == Format::html) {
        if (trace.ordered()) pictures.push_back(render_timeline_svg(trace));
        pictures.push_back(detail::profile_svg(detail::shown_stacks(stacks_of(result, format), options.cpp_frames),
                                               analysis::Side::after));
    }
    write_document(document(trace), format, options, sink, pictures, &result);
}

void write_trend(const analysis::TrendResult& trend, const analysis::Result& result, Format format,
                 const RenderOptions& options, const Sink& sink) {
    if (format == Format::svg) return sink(render_timeline_svg(trend));
    if (stack_picture(format)) return sink(render(stacks_of(result, format), format, options));
    std::vector<std::string> pictures;
    if (format == Format::html) pictures.push_back(render_timeline_svg(trend));
    write_document(document(trend), format, options, sink, pictures, &result);
}

// Why a one-sided picture of `first` to `last` is empty: the output stays a valid (empty)
// picture, and standard error says why.
std::string empty_picture(Format format, analysis::Side side, std::string_view noun, const std::string& first,
                          const std::string& last) {
    switch (side) {
        case analysis::Side::before:
            return fmt::format("--format {} is empty: no {} holds memory in {}", to_string(format), noun, first);
        case analysis::Side::after:
            return fmt::format("--format {} is empty: no {} holds memory in {}", to_string(format), noun, last);
        default:
            return fmt::format(
                "--format {} is empty: no {} grew from {} to {} (--side before or after shows their "
                "bytes)",
                to_string(format), noun, first, last);
    }
}

// A trend's sites drawn from stacks, or a diff's folded or DOT output (which draw one side),
// when that side has nothing to draw.
std::optional<std::string> empty_picture(const analysis::Result& result, Format format, const RenderOptions& options) {
    if (!result.stacks || !analysis::sided(*result.stacks, options.side).empty()) return std::nullopt;
    if (const auto* trend = std::get_if<analysis::TrendResult>(&result.value)) {
        if (!stack_picture(format) || trend->points.empty()) return std::nullopt;
        // The sides of trend_stacks: the first capture after warm-up, and the last.
        const auto& first = trend->file_of(trend->points[std::min(trend->warmup, trend->points.size() - 1)]);
        return empty_picture(format, options.side, "site", first, trend->file_of(trend->points.back()));
    }
    const auto* diff = std::get_if<analysis::DiffResult>(&result.value);
    const auto* snap = diff ? std::get_if<analysis::SnapshotDiff>(diff) : nullptr;
    if (!snap || (format != Format::folded && format != Format::dot)) return std::nullopt;
    return empty_picture(format, options.side, "stack", snap->before_file, snap->after_file);
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

Document document(const analysis::InfoResult& result) {
    if (const auto* snap = std::get_if<analysis::SnapshotInfo>(&result)) return doc::snapshot_info(*snap);
    return doc::stats_info(std::get<analysis::StatsInfo>(result));
}

Document document(const analysis::DiffResult& result) {
    if (const auto* snap = std::get_if<analysis::SnapshotDiff>(&result)) return doc::snapshot_diff(*snap);
    return doc::stats_diff(std::get<analysis::StatsDiff>(result));
}

Document document(const analysis::TraceResult& result) { return doc::trace(result); }
Document document(const analysis::TrendResult& result) { return doc::trend(result); }
Document document(const analysis::RanksResult& result) { return doc::ranks(result); }

std::string render(const Document& d, Format format, const RenderOptions& options) {
    std::string out;
    write_document(d, format, options, [&out](std::string_view piece) { out += piece; });
    return out;
}

std::string render(const analysis::StackProfile& stacks, Format format, const RenderOptions& options) {
    const auto profile = detail::shown_stacks(stacks, options.cpp_frames);
    switch (format) {
        case Format::folded:
            return detail::profile_folded(profile, options.side);
        case Format::svg:
            return detail::profile_svg(profile, options.side);
        case Format::dot:
            return detail::profile_dot(profile, options.side, options.node_fraction);
        case Format::pprof:
            return detail::profile_pprof(profile, options.side);
        default:
            break;
    }
    throw unsupported(format, "stack pictures (folded, svg, dot, pprof)");
}

std::string render_timeline_svg(const analysis::TraceResult& trace) { return detail::trace_timeline_svg(trace); }
std::string render_timeline_svg(const analysis::TrendResult& trend) { return detail::trend_svg(trend); }

std::string render_jsonl(const analysis::InfoResult& result, const JsonlContext& context) {
    std::string out;
    detail::write_jsonl(document(result), {context.file, context.rank, context.step},
                        [&out](std::string_view piece) { out += piece; });
    return out;
}

std::vector<std::string> warning_lines(const analysis::Result& result, Format format, const RenderOptions& options) {
    std::vector<std::string> out;
    for (const auto& w : result.warnings) out.push_back(doc::phrase(w));
    if (auto empty = empty_picture(result, format, options)) out.push_back(std::move(*empty));
    // A gate that could not be judged is said where CI logs look.
    if (result.gate && !result.gate->tripped)
        for (const auto& r : result.gate->reasons)
            out.push_back((r.is("growth") ? std::string("--fail-on-growth") : result.gate->option) + ": " +
                          doc::phrase(r));
    return out;
}

std::optional<std::string> gate_line(const analysis::Result& result) {
    if (!result.gate || !result.gate->tripped) return std::nullopt;
    std::string why;
    for (const auto& r : result.gate->reasons) why += (why.empty() ? "" : "; ") + doc::phrase(r);
    if (result.gate->option == "--fail-on-leak") return fmt::format("--fail-on-leak: a leak verdict holds ({})", why);
    return fmt::format("{}: {}", result.gate->option, why);
}

void check_format(analysis::Command command, Format format) {
    if (format != Format::perfetto || command == analysis::Command::trace) return;
    // A trace is the only result replayed on a clock.
    const auto [name, formats] = [command]() -> std::pair<std::string_view, std::string_view> {
        switch (command) {
            case analysis::Command::info:
                return {"info", "text, json, jsonl, markdown, csv, html, svg, folded, dot or pprof"};
            case analysis::Command::diff:
                return {"diff", "text, json, markdown, csv, html, svg, folded, dot or pprof"};
            case analysis::Command::trend:
                return {"trend", "text, json, markdown, csv, html, svg, folded, dot or pprof"};
            default:
                return {"ranks", "text, json, markdown, csv, folded, svg, dot or pprof"};
        }
    }();
    throw usage_error(fmt::format("--format perfetto is for `trace`; {} takes {}", name, formats));
}

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
    if (format == Format::jsonl) {
        // info's records are usually written as each file is read (Request::on_info).
        const auto* infos = std::get_if<std::vector<analysis::InfoResult>>(&result.value);
        if (!infos) throw usage_error("--format jsonl is for `info` of many captures (info --format jsonl DIR)");
        for (const auto& info : *infos) detail::write_jsonl(document(info), {}, sink);
        return;
    }
    std::visit(
        [format](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            check_format(std::is_same_v<T, std::vector<analysis::InfoResult>> ? analysis::Command::info
                         : std::is_same_v<T, analysis::DiffResult>            ? analysis::Command::diff
                         : std::is_same_v<T, analysis::TraceResult>           ? analysis::Command::trace
                         : std::is_same_v<T, analysis::TrendResult>           ? analysis::Command::trend
                                                                              : analysis::Command::ranks,
                         format);
        },
        result.value);
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
                sink(render(stacks_of(result, format), format, options));
            else
                write_document(document(value), format, options, sink, {}, &result);
        },
        result.value);
}

}  // namespace memsnap::report
