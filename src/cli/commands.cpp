#include "commands.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/steps.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

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

// A file to read, and whether it was found in a directory rather than named.
struct InputFile {
    std::string path;
    bool in_directory = false;
};

// The files named, a directory standing for the regular files in it (sorted by name, hidden
// ones left out): a job's captures are often thousands of files in one folder.
std::vector<InputFile> expand(const std::vector<std::string>& names) {
    std::vector<InputFile> out;
    for (const auto& name : names) {
        std::error_code ec;
        if (name == "-" || !std::filesystem::is_directory(name, ec)) {
            out.push_back({name, false});
            continue;
        }
        std::vector<std::string> inside;
        for (const auto& entry : std::filesystem::directory_iterator(name, ec)) {
            const auto base = entry.path().filename().string();
            if (!base.empty() && base.front() != '.' && entry.is_regular_file(ec))
                inside.push_back(entry.path().string());
        }
        if (ec) throw input_error(fmt::format("cannot list the directory: {}", ec.message()), name);
        std::sort(inside.begin(), inside.end());
        for (auto& path : inside) out.push_back({std::move(path), true});
    }
    if (out.empty()) throw usage_error("the directories named hold no files");
    return out;
}

std::vector<InputFile> named(const std::vector<std::string>& names) {
    std::vector<InputFile> out;
    for (const auto& name : names) out.push_back({name, false});
    return out;
}

// `work(i)` for every file, one file per core at a time: each worker holds one capture while
// it reduces it, so memory stays near one capture per core. A file found in a directory that
// is not a capture (a README, an expected.json) is skipped with a warning in `skipped`; any
// other error, the first in file order, is thrown once all are done.
template <class Result, class Work>
std::vector<Result> for_each_file(const std::vector<InputFile>& files, std::vector<std::string>& skipped, Work&& work) {
    const std::size_t count = files.size();
    std::vector<std::optional<Result>> results(count);
    std::vector<std::exception_ptr> errors(count);
    std::vector<std::string> skip_reason(count);
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
        for (std::size_t i = next++; i < count; i = next++) {
            try {
                results[i].emplace(work(i));
            } catch (const Error& e) {
                if (files[i].in_directory && e.kind() == ErrorKind::input)
                    skip_reason[i] = fmt::format("skipped {}", e.describe());
                else
                    errors[i] = std::current_exception();
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    const std::size_t threads = std::min<std::size_t>(count, std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    std::vector<Result> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        if (results[i])
            out.push_back(std::move(*results[i]));
        else
            skipped.push_back(std::move(skip_reason[i]));
    }
    if (out.empty()) throw input_error("none of the files found is a capture", files.front().path);
    return out;
}

std::optional<int> device_option(const std::string& text) {
    if (const auto d = whole_number("--device", text, 65535)) return static_cast<int>(*d);
    return std::nullopt;
}

// --top N, or `fallback` when not given.
std::size_t top_option(const std::string& text, std::size_t fallback) {
    return static_cast<std::size_t>(
        whole_number("--top", text, 1'000'000'000).value_or(static_cast<std::int64_t>(fallback)));
}

// Reads one capture. A pickle over 64 MiB read for a terminal shows its progress on standard
// error (bytes read and rate), one line rewritten in place and cleared at the end.
capture::Capture load(const std::string& path, const GlobalOptions& globals, std::uint64_t limit) {
    static std::mutex terminal;
    if (::isatty(STDERR_FILENO) != 1) return capture::load_capture(path, globals.limits, limit);
    const auto start = std::chrono::steady_clock::now();
    bool shown = false;
    double shown_at = -1;
    const auto progress = [&](std::uint64_t done, std::uint64_t total) {
        if (total <= (std::uint64_t{64} << 20)) return;  // small files need no progress
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (shown && seconds - shown_at < 0.1) return;  // the reader calls every MiB
        shown_at = seconds;
        const std::lock_guard lock(terminal);
        fmt::print(stderr, "\r\x1b[Kmemsnap: reading {}: {} of {} ({}/s)", util::printable(path),
                   util::human_bytes(static_cast<std::int64_t>(done)),
                   util::human_bytes(static_cast<std::int64_t>(total)),
                   util::human_bytes(seconds > 0 ? static_cast<std::int64_t>(static_cast<double>(done) / seconds) : 0));
        shown = true;
    };
    const auto clear = [&] {
        if (!shown) return;
        const std::lock_guard lock(terminal);
        fmt::print(stderr, "\r\x1b[K");
    };
    try {
        auto capture = capture::load_capture(path, globals.limits, limit, progress);
        clear();
        return capture;
    } catch (...) {
        clear();
        throw;
    }
}

bool picture(report::Format f) {
    return f == report::Format::folded || f == report::Format::svg || f == report::Format::dot ||
           f == report::Format::pprof;
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

// A snapshot reduced to its totals, categories and every site (what trend and ranks need).
analysis::SnapshotContents reduce(const capture::Capture& capture, const analysis::AnalysisOptions& options) {
    auto every_site = options;
    every_site.top = 0;
    return analysis::describe_snapshot(capture.snapshot(), every_site);
}

}  // namespace

CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals) {
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    const auto format = format_of(options.format);
    const bool lines = format == report::Format::jsonl;
    analysis.top = top_option(options.top, lines ? kMachineTop : 10);
    analysis.device = device_option(options.device);
    analysis::validate(analysis);
    const auto limit = max_input(globals);
    // Directories stand for their files in jsonl, the format for many files; otherwise a
    // directory is an input error as any unreadable file.
    const auto files = lines ? expand(options.files) : named(options.files);
    if (files.size() > 1 && format != report::Format::text && !lines)
        throw usage_error(fmt::format("--format {}: one file at a time (--format jsonl takes many)", options.format));
    binary_allowed(format);
    const auto render = render_options(globals, format, false, analysis::Side::after, options.node_fraction);
    CommandOutput out;
    const auto pieces = for_each_file<std::string>(files, out.warnings, [&](std::size_t i) {
        const auto capture = load(files[i].path, globals, limit);
        if (picture(format) || format == report::Format::html) {
            if (!capture.is_snapshot())
                throw usage_error(fmt::format("--format {} needs a snapshot (stacks); {} is a {}", options.format,
                                              capture.path, capture.kind_name()));
            const auto stacks = analysis::live_stacks(capture.snapshot(), analysis);
            if (picture(format)) return report::render(stacks, format, render);
            return report::render_html(std::get<analysis::SnapshotInfo>(analysis::info(capture, analysis)), stacks);
        }
        const auto result = analysis::info(capture, analysis);
        if (lines)
            return report::render_jsonl(result, {files[i].path, util::rank_from_file_name(files[i].path),
                                                 util::step_from_file_name(files[i].path)});
        return report::render(result, format, render);
    });
    for (std::size_t i = 0; i < pieces.size(); ++i) out.text += (i && !lines ? "\n" : "") + pieces[i];
    return out;
}

CommandOutput run_trace(const TraceOptions& options, const GlobalOptions& globals) {
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    analysis.stacks = {options.hide, options.focus, false};
    analysis.top = top_option(options.top, 10);
    analysis.device = device_option(options.device);
    analysis::TraceOptions trace;
    if (!options.device_memory.empty()) trace.device_memory = util::parse_size(options.device_memory);
    const auto format = format_of(options.format);
    if (options.at != "peak" && options.at != "end")
        throw usage_error(fmt::format("--at: '{}' is not peak or end", options.at));
    if (options.picture != "timeline" && options.picture != "flame")
        throw usage_error(fmt::format("--picture: '{}' is not timeline or flame", options.picture));
    binary_allowed(format);
    const auto render =
        render_options(globals, format, options.cpp_frames, analysis::Side::after, options.node_fraction);
    analysis::validate(analysis);
    const auto capture = load(options.file, globals, max_input(globals));
    if (!capture.is_snapshot())
        throw usage_error(fmt::format("trace needs a snapshot; {} is a {}", capture.path, capture.kind_name()));
    const bool flame = picture(format) && !(format == report::Format::svg && options.picture == "timeline");
    if (flame || format == report::Format::html)
        trace.stacks =
            options.at == "peak" ? analysis::TraceOptions::Stacks::peak : analysis::TraceOptions::Stacks::end;
    const auto result = analysis::analyze_trace(capture.snapshot(), analysis, trace);
    CommandOutput out;
    out.warnings = capture.snapshot().warnings;
    if (flame)
        out.text = report::render(*result.stacks, format, render);
    else if (format == report::Format::html)
        out.text = report::render_html(result, *result.stacks, render);
    else if (format == report::Format::svg)
        out.text = report::render_timeline_svg(result);
    else
        out.text = report::render(result, format, render);
    return out;
}

CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    if (options.files.size() > 2) {
        TrendOptions trend;
        trend.files = options.files;
        trend.steps = options.steps;
        trend.format = options.format;
        trend.top = options.top;
        trend.device = options.device;
        trend.fail_on_growth = options.fail_on_growth;
        trend.side = options.side;
        trend.node_fraction = options.node_fraction;
        return run_trend(trend, globals);
    }
    if (options.files.size() != 2) throw usage_error("diff needs two captures (more make a trend)");
    const std::string& before_file = options.files[0];
    const std::string& after_file = options.files[1];
    analysis.steps = util::resolve_steps(options.steps, before_file, after_file);
    analysis.stacks = {options.hide, options.focus, options.granularity == "function"};
    // Machine formats list up to 1000 sites unless --top is given: every site of any real
    // capture, while a crafted one with a million sites cannot make a gigabyte of JSON.
    const bool machine = format == report::Format::json || format == report::Format::csv;
    if (picture(format) || format == report::Format::html)
        analysis.stack_samples =
            options.side == "delta" ? analysis::StackSamples::changed : analysis::StackSamples::all;
    binary_allowed(format);
    analysis.top = top_option(options.top, machine ? kMachineTop : 10);
    analysis.device = device_option(options.device);
    if (!options.min_growth.empty()) analysis.min_growth = util::parse_size(options.min_growth);
    std::optional<std::int64_t> gate;
    if (!options.fail_on_growth.empty()) gate = util::parse_size(options.fail_on_growth);
    const auto render =
        render_options(globals, format, options.cpp_frames, side_of(options.side), options.node_fraction);
    analysis::validate(analysis);
    const auto limit = max_input(globals);

    // The two files are read concurrently; a log diffed with itself (its series of tables) is
    // read once.
    std::error_code ec;
    const bool same_file =
        before_file != "-" && after_file != "-" && std::filesystem::equivalent(before_file, after_file, ec) && !ec;
    std::vector<InputFile> inputs{{before_file, false}};
    if (!same_file) inputs.push_back({after_file, false});
    std::vector<std::string> none_skipped;  // named files are never skipped
    auto loaded = for_each_file<capture::Capture>(inputs, none_skipped,
                                                  [&](std::size_t i) { return load(inputs[i].path, globals, limit); });
    const capture::Capture& before = loaded[0];
    const std::optional<capture::Capture> other =
        same_file ? std::nullopt : std::optional<capture::Capture>(std::move(loaded[1]));
    auto result = analysis::diff(before, other ? *other : before, analysis);
    CommandOutput out;
    out.warnings = analysis::warnings_of(result);
    if (gate)
        if (auto message = analysis::check_growth_gate(result, *gate)) out.gate_message = *message;
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

CommandOutput run_trend(const TrendOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    const bool machine = format == report::Format::json || format == report::Format::csv;
    analysis.top = top_option(options.top, machine ? kMachineTop : 10);
    analysis.device = device_option(options.device);
    analysis::TrendOptions trend;
    trend.warmup = static_cast<std::size_t>(whole_number("--warmup", options.warmup, 1'000'000).value_or(0));
    std::optional<std::int64_t> gate;
    if (!options.fail_on_growth.empty()) gate = util::parse_size(options.fail_on_growth);
    const auto render = render_options(globals, format, false, side_of(options.side), options.node_fraction);
    binary_allowed(format);
    analysis::validate(analysis);
    const auto limit = max_input(globals);
    const auto files = expand(options.files);
    if (!options.steps.empty()) trend.steps = util::parse_step_list(options.steps, files.size());
    std::vector<std::string> skipped;

    // Snapshots are reduced as they are read; summaries and stats are small and kept.
    struct Reduced {
        std::string file;
        std::optional<analysis::SnapshotContents> snapshot;
        std::optional<stats::StatsCapture> stats;
    };
    auto reduced = for_each_file<Reduced>(files, skipped, [&](std::size_t i) {
        auto capture = load(files[i].path, globals, limit);
        Reduced r{files[i].path, std::nullopt, std::nullopt};
        if (capture.is_snapshot())
            r.snapshot = reduce(capture, analysis);
        else
            r.stats = std::move(std::get<stats::StatsCapture>(capture.content));
        return r;
    });
    if (!trend.steps.empty() && !skipped.empty())
        throw usage_error(
            fmt::format("--steps gives {} steps, but {} of the files found are not captures; name the "
                        "captures instead of their directory",
                        trend.steps.size(), skipped.size()));
    const bool snapshots =
        std::all_of(reduced.begin(), reduced.end(), [](const Reduced& r) { return r.snapshot.has_value(); });
    const bool tables =
        std::none_of(reduced.begin(), reduced.end(), [](const Reduced& r) { return r.snapshot.has_value(); });
    if (!snapshots && !tables)
        throw usage_error("trend needs captures of one kind: all snapshots, or memory_summary/memory_stats files");
    analysis::TrendResult result;
    if (snapshots) {
        std::vector<analysis::SeriesCapture> series;
        for (auto& r : reduced) series.push_back({r.file, std::move(*r.snapshot)});
        result = analysis::trend_snapshots(std::move(series), analysis, trend);
    } else {
        std::vector<stats::StatsCapture> series;
        for (auto& r : reduced) series.push_back(std::move(*r.stats));
        result = analysis::trend_stats(series, analysis, trend);
    }
    CommandOutput out;
    out.warnings = std::move(skipped);
    out.warnings.insert(out.warnings.end(), result.warnings.begin(), result.warnings.end());
    if (gate)
        if (auto message = analysis::check_trend_gate(result, *gate)) out.gate_message = *message;
    if (picture(format) && format != report::Format::svg && result.kind != "snapshot")
        throw usage_error(
            fmt::format("--format {} needs sites, which summaries and stats do not have: use svg, html or "
                        "text",
                        options.format));
    if (format == report::Format::svg)
        out.text = report::render_timeline_svg(result);
    else if (picture(format))
        out.text = report::render(analysis::trend_stacks(result), format, render);
    else if (format == report::Format::html)
        out.text = report::render_html(result);
    else
        out.text = report::render(result, format, render);
    return out;
}

CommandOutput run_ranks(const RanksOptions& options, const GlobalOptions& globals) {
    const auto format = format_of(options.format);
    analysis::AnalysisOptions analysis;
    analysis.rules = globals.rules;
    analysis.top = top_option(options.top, 10);
    analysis.device = device_option(options.device);
    analysis::validate(analysis);
    const auto limit = max_input(globals);
    const auto files = expand(options.files);
    binary_allowed(format);
    std::vector<std::string> skipped;
    auto captures = for_each_file<analysis::RankCapture>(files, skipped, [&](std::size_t i) {
        const auto capture = load(files[i].path, globals, limit);
        if (!capture.is_snapshot())
            throw usage_error(fmt::format("ranks needs snapshots; {} is a {}", capture.path, capture.kind_name()));
        return analysis::RankCapture{util::rank_from_file_name(files[i].path), files[i].path,
                                     reduce(capture, analysis)};
    });
    const auto result = analysis::compare_ranks(std::move(captures), analysis);
    CommandOutput out;
    const auto render = render_options(globals, format, false, analysis::Side::after, options.node_fraction);
    out.warnings = std::move(skipped);
    out.warnings.insert(out.warnings.end(), result.warnings.begin(), result.warnings.end());
    if (picture(format))
        out.text = report::render(analysis::ranks_stacks(result), format, render);
    else
        out.text = report::render(result, format, render);
    return out;
}

}  // namespace memsnap::cli
