#include "commands.hpp"

#include "progress.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/steps.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>

#include <unistd.h>

namespace memsnap::cli {

namespace {

constexpr auto kMachineTop =
    static_cast<std::int64_t>(limits::machine_sites);  // sites that --format json and csv list by default

bool use_color(const GlobalOptions& globals) {
    if (globals.color == "never") return false;
    const char* no_color = std::getenv("NO_COLOR");
    if (no_color != nullptr && *no_color != '\0') return false;
    if (globals.color == "always") return true;
    return ::isatty(STDOUT_FILENO) == 1;
}

// A whole number in [0, max] for `option`, or nullopt when `text` is empty.
std::optional<std::int64_t> whole_number(std::string_view option, const std::string& text, std::int64_t max) {
    if (text.empty()) return std::nullopt;
    std::int64_t value = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || value < 0 || value > max)
        throw usage_error(fmt::format("{}: '{}' is not a whole number from 0 to {}", option, text, max));
    return value;
}

std::uint64_t max_input(const GlobalOptions& globals) {
    const auto bytes = util::parse_size(globals.max_input);
    if (bytes <= 0) throw usage_error(fmt::format("--max-input: '{}' is not a positive size", globals.max_input));
    return static_cast<std::uint64_t>(bytes);
}

report::Format format_of(const std::string& name) {
    if (const auto f = report::parse_format(name)) return *f;
    throw usage_error(fmt::format("--format: unknown format '{}'", name));
}

std::optional<int> device_option(const std::string& text) {
    if (const auto d = whole_number("--device", text, static_cast<std::int64_t>(limits::device_id)))
        return static_cast<int>(*d);
    return std::nullopt;
}

// --top N, or `fallback` when not given.
std::size_t top_option(const std::string& text, std::size_t fallback) {
    return static_cast<std::size_t>(
        whole_number("--top", text, 1'000'000'000).value_or(static_cast<std::int64_t>(fallback)));
}

analysis::Side side_of(const std::string& name) {
    if (name == "before") return analysis::Side::before;
    if (name == "after") return analysis::Side::after;
    if (name == "delta") return analysis::Side::delta;
    throw usage_error(fmt::format("--side: '{}' is not before, after or delta", name));
}

double fraction_of(const std::string& text) {
    if (text.empty()) return 0.005;
    double value = -1;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || !(value >= 0 && value <= 1))
        throw usage_error(fmt::format("--node-fraction: '{}' is not a number from 0 to 1", text));
    return value;
}

// How to render for this terminal and these options.
report::RenderOptions render_options(const GlobalOptions& globals, report::Format format, bool cpp_frames,
                                     analysis::Side side, const std::string& node_fraction) {
    report::RenderOptions render{use_color(globals) && format == report::Format::text, cpp_frames};
    render.side = side;
    render.node_fraction = fraction_of(node_fraction);
    return render;
}

// pprof is binary: never onto a terminal.
void binary_allowed(report::Format format) {
    if (format == report::Format::pprof && ::isatty(STDOUT_FILENO) == 1)
        throw usage_error("--format pprof writes a gzipped protobuf: redirect it to a file (> profile.pb.gz)");
}

// A request for `command`, with what every command shares.
analysis::Request request(analysis::Command command, const GlobalOptions& globals, report::Format format,
                          const std::string& format_name, const report::RenderOptions& render) {
    analysis::Request rq;
    rq.command = command;
    rq.options.rules = globals.rules;
    const auto limit = max_input(globals);
    rq.load = [&globals, limit](const analysis::Input& input) {
        return load_with_progress(input, globals.limits, limit);
    };
    rq.load_tables = [&globals, limit](const analysis::Input& input, const stats::TableSink& tables) {
        return load_with_progress(input, globals.limits, limit, tables);
    };
    rq.stacks_for = [format, render](analysis::Command c) { return report::stack_need(c, format, render); };
    rq.output = fmt::format("--format {}", format_name);
    rq.view = format == report::Format::html;
    return rq;
}

// --fail-on-growth RATE and --fail-on-leak.
void gates(analysis::Request& rq, const std::string& growth, bool leak) {
    if (!growth.empty()) rq.gates.growth_per_step = util::parse_size(growth);
    rq.gates.leak = leak;
}

// Runs the request and hands its output to `finish`, streamed.
CommandOutput execute(const analysis::Request& rq, report::Format format, const report::RenderOptions& render) {
    auto result = std::make_shared<analysis::Result>(analysis::run(rq));
    CommandOutput out;
    out.warnings = report::warning_lines(*result, format, render);
    out.gate_message = report::gate_line(*result).value_or("");
    out.stream = [result, format, render](std::FILE* file) {
        report::write(*result, format, render,
                      [file](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), file); });
    };
    return out;
}

}  // namespace

CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    report::check_format(analysis::Command::info, format);
    const bool lines = format == report::Format::jsonl;
    if (options.files.size() > 1 && format != report::Format::text && !lines)
        throw usage_error(fmt::format("--format {}: one file at a time (--format jsonl takes many)", options.format));
    binary_allowed(format);
    const auto render =
        render_options(globals, format, options.cpp_frames, analysis::Side::after, options.node_fraction);
    auto rq = request(analysis::Command::info, globals, format, options.format, render);
    rq.options.top = top_option(options.top, lines ? kMachineTop : 10);
    rq.options.device = device_option(options.device);
    rq.names = options.files;
    // Directories stand for their files in jsonl, the format for many files; otherwise a
    // directory is an input error as any unreadable file.
    rq.expand_directories = lines;
    if (lines)
        rq.on_info = [](const analysis::Input& input, const analysis::InfoResult& result) {
            const auto text = report::render_jsonl(
                result, {input.path, util::rank_from_file_name(input.path), util::step_from_file_name(input.path)});
            std::fwrite(text.data(), 1, text.size(), stdout);
        };
    return execute(rq, format, render);
}

CommandOutput run_trace(const TraceOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    report::check_format(analysis::Command::trace, format);
    if (options.at != "peak" && options.at != "end")
        throw usage_error(fmt::format("--at: '{}' is not peak or end", options.at));
    if (options.picture != "timeline" && options.picture != "flame")
        throw usage_error(fmt::format("--picture: '{}' is not timeline or flame", options.picture));
    binary_allowed(format);
    auto render = render_options(globals, format, options.cpp_frames, analysis::Side::after, options.node_fraction);
    render.at_end = options.at == "end";
    render.flame_svg = options.picture == "flame";
    auto rq = request(analysis::Command::trace, globals, format, options.format, render);
    rq.options.stacks = {options.hide, options.focus, false};
    rq.options.top = top_option(options.top, 10);
    rq.options.device = device_option(options.device);
    if (!options.device_memory.empty()) rq.trace.device_memory = util::parse_size(options.device_memory);
    gates(rq, options.fail_on_growth, options.fail_on_leak);
    rq.names = {options.file};
    return execute(rq, format, render);
}

CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    report::check_format(analysis::Command::diff, format);
    binary_allowed(format);
    const auto render =
        render_options(globals, format, options.cpp_frames, side_of(options.side), options.node_fraction);
    auto rq = request(analysis::Command::diff, globals, format, options.format, render);
    rq.names = options.files;
    rq.steps = options.steps;
    rq.options.stacks = {options.hide, options.focus, options.granularity == "function"};
    // Machine formats list up to 1000 sites unless --top is given: every site of any real
    // capture, while a crafted one with a million sites cannot make a gigabyte of JSON.
    const bool machine = format == report::Format::json || format == report::Format::csv;
    rq.options.top = top_option(options.top, machine ? kMachineTop : 10);
    rq.options.device = device_option(options.device);
    if (!options.min_growth.empty()) rq.options.min_growth = util::parse_size(options.min_growth);
    gates(rq, options.fail_on_growth, options.fail_on_leak);
    return execute(rq, format, render);
}

CommandOutput run_trend(const TrendOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    report::check_format(analysis::Command::trend, format);
    binary_allowed(format);
    const auto render = render_options(globals, format, false, side_of(options.side), options.node_fraction);
    auto rq = request(analysis::Command::trend, globals, format, options.format, render);
    rq.names = options.files;
    rq.steps = options.steps;
    const bool machine = format == report::Format::json || format == report::Format::csv;
    rq.options.top = top_option(options.top, machine ? kMachineTop : 10);
    rq.options.device = device_option(options.device);
    rq.warmup = static_cast<std::size_t>(whole_number("--warmup", options.warmup, 1'000'000).value_or(0));
    gates(rq, options.fail_on_growth, options.fail_on_leak);
    return execute(rq, format, render);
}

CommandOutput run_ranks(const RanksOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    report::check_format(analysis::Command::ranks, format);
    binary_allowed(format);
    const auto render = render_options(globals, format, false, analysis::Side::after, options.node_fraction);
    auto rq = request(analysis::Command::ranks, globals, format, options.format, render);
    rq.names = options.files;
    rq.options.top = top_option(options.top, 10);
    rq.options.device = device_option(options.device);
    return execute(rq, format, render);
}

}  // namespace memsnap::cli
