#include "commands.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/trace.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/util/steps.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>

#include <charconv>
#include <cstdlib>

#include <unistd.h>

namespace memsnap::cli {

namespace {

constexpr std::int64_t kMachineTop = 1000;  // sites that --format json and csv list by default

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

}  // namespace

CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals) {
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    analysis.top = static_cast<std::size_t>(whole_number("--top", options.top, 1'000'000'000).value_or(10));
    if (const auto d = whole_number("--device", options.device, 65535)) analysis.device = static_cast<int>(*d);
    const auto format = format_of(options.format);
    analysis::validate(analysis);
    (void)max_input(globals);
    const auto capture = capture::load_capture(options.file, globals.limits, max_input(globals));
    const auto result = analysis::info(capture, analysis);
    CommandOutput out;
    out.text = report::render(result, format, {use_color(globals) && format == report::Format::text, false});
    return out;
}

CommandOutput run_trace(const TraceOptions& options, const GlobalOptions& globals) {
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    analysis.stacks = {options.hide, options.focus, false};
    analysis.top = static_cast<std::size_t>(whole_number("--top", options.top, 1'000'000'000).value_or(10));
    if (const auto d = whole_number("--device", options.device, 65535)) analysis.device = static_cast<int>(*d);
    analysis::TraceOptions trace;
    if (!options.device_memory.empty()) trace.device_memory = util::parse_size(options.device_memory);
    const auto format = format_of(options.format);
    analysis::validate(analysis);
    (void)max_input(globals);
    const auto capture = capture::load_capture(options.file, globals.limits, max_input(globals));
    if (!capture.is_snapshot())
        throw usage_error(fmt::format("trace needs a snapshot; {} is a {}", capture.path, capture.kind_name()));
    const auto result = analysis::analyze_trace(capture.snapshot(), analysis, trace);
    CommandOutput out;
    out.text = report::render(result, format, {use_color(globals) && format == report::Format::text, options.cpp_frames});
    out.warnings = capture.snapshot().warnings;
    return out;
}

CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    analysis.steps = util::resolve_steps(options.steps, options.before, options.after);
    analysis.stacks = {options.hide, options.focus, options.granularity == "function"};
    // Machine formats list up to 1000 sites unless --top is given: every site of any real
    // capture, while a crafted one with a million sites cannot make a gigabyte of JSON.
    const bool machine = format == report::Format::json || format == report::Format::csv;
    analysis.grown_stacks = format == report::Format::folded;
    analysis.top = static_cast<std::size_t>(
        whole_number("--top", options.top, 1'000'000'000).value_or(machine ? kMachineTop : 10));
    if (const auto d = whole_number("--device", options.device, 65535)) analysis.device = static_cast<int>(*d);
    if (!options.min_growth.empty()) analysis.min_growth = util::parse_size(options.min_growth);
    std::optional<std::int64_t> gate;
    if (!options.fail_on_growth.empty()) gate = util::parse_size(options.fail_on_growth);
    analysis::validate(analysis);
    (void)max_input(globals);

    const auto before = capture::load_capture(options.before, globals.limits, max_input(globals));
    // A log diffed with itself (its series of tables) is read once.
    std::error_code ec;
    const bool same_file = options.before != "-" && options.after != "-" &&
                           std::filesystem::equivalent(options.before, options.after, ec) && !ec;
    std::optional<capture::Capture> other;
    if (!same_file) other = capture::load_capture(options.after, globals.limits, max_input(globals));
    auto result = analysis::diff(before, other ? *other : before, analysis);
    CommandOutput out;
    out.warnings = analysis::warnings_of(result);
    if (gate)
        if (auto message = analysis::check_growth_gate(result, *gate)) out.gate_message = *message;
    const report::RenderOptions render{use_color(globals) && format == report::Format::text, options.cpp_frames};
    if (format == report::Format::json) {
        // Written as it is made: a long site list is never held whole.
        out.stream = [result = std::make_shared<analysis::DiffResult>(std::move(result)), format,
                      render](std::FILE* file) {
            report::write(*result, format, render,
                          [file](std::string_view piece) { std::fwrite(piece.data(), 1, piece.size(), file); });
        };
    } else {
        out.text = report::render(result, format, render);
    }
    return out;
}

}  // namespace memsnap::cli
