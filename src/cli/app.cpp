#include "app.hpp"

#include "commands.hpp"
#include "process.hpp"

#include <memsnap/error.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/util/format.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>

namespace memsnap::cli {

namespace {

// The caps of limits::caps, for the end of --help (the man page's LIMITS lists them with why).
std::string limits_footer() {
    std::vector<std::string> caps;
    for (const auto& cap : limits::caps)
        caps.push_back(cap.unit == "bytes" && cap.value % (1 << 20) == 0
                           ? fmt::format("{} {} MiB", cap.name, cap.value >> 20)
                           : fmt::format("{} {}", cap.name, cap.value));
    return fmt::format("Caps on what memsnap keeps and writes (LIMITS in memsnap(1)): {}.", fmt::join(caps, ", "));
}

void add_global_options(CLI::App& app, GlobalOptions& g) {
    app.add_option("--max-depth", g.limits.max_depth,
                   "Refuse pickles and JSON nested deeper than this (default 200, at most 1000)")
        ->check(CLI::Range(1u, pickle::Limits::depth_cap));
    app.add_option("--max-memo", g.limits.max_memo_entries,
                   "Refuse pickles with more memo entries than this (default 134217728, at most 536870912)")
        ->check(CLI::Range(std::uint64_t{1}, pickle::Limits::memo_cap));
    app.add_option("--max-container", g.limits.max_container_length,
                   "Refuse containers with more items than this (default 268435456)")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-string", g.limits.max_string_length,
                   "Refuse strings longer than this many bytes (default 67108864)")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-input", g.max_input, "Read pipes, devices and standard input up to this size (default 8GiB)");
    app.add_option("--user-code", g.rules.user_code,
                   "Regex on frame file names: these Python files are user code, added to the default rule "
                   "(repeatable)")
        ->allow_extra_args(false);
    app.add_option("--not-user-code", g.rules.not_user_code,
                   "Regex on frame file names: these are never user code, added to the default rule (repeatable)")
        ->allow_extra_args(false);
    app.add_flag_callback(
        "--no-default-user-code", [&g] { g.rules.use_defaults = false; },
        "Start the user-code rule from nothing: only --user-code patterns are user code");
    app.add_option("--color", g.color, "Colour in text output: auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
}

CLI::App* add_info(CLI::App& app, InfoOptions& info) {
    auto* cmd =
        app.add_subcommand("info", "Describe one capture: snapshot pickle/JSON, memory_summary text or memory_stats");
    cmd->add_option("files", info.files,
                    "Capture file ('-' reads standard input); several files with --format text, files or directories "
                    "with --format jsonl")
        ->required();
    cmd->add_option("--format", info.format,
                    "Output format: text, json, jsonl (one record per line per total, category and site, for DuckDB "
                    "or Spark); for snapshots also html, svg (flame graph of live bytes), folded, dot, pprof");
    cmd->add_option("--top", info.top, "How many allocation sites to list; 0 lists all (default 10)");
    cmd->add_option("--device", info.device, "Only this CUDA device");
    cmd->add_option("--node-fraction", info.node_fraction,
                    "--format dot: leave out frames below this share of the bytes (default 0.005)");
    cmd->add_flag("--cpp-frames", info.cpp_frames,
                  "Keep C++ (interpreter, dispatcher) frames in pictures (default: dropped from stacks with Python "
                  "frames)");
    return cmd;
}

CLI::App* add_trace(CLI::App& app, TraceOptions& trace) {
    auto* cmd = app.add_subcommand("trace",
                                   "Replay one snapshot's trace: timeline, peak, iterations, what each "
                                   "iteration leaves live, out-of-memory events explained");
    cmd->add_option("file", trace.file, "Snapshot with a trace ('-' reads standard input)")->required();
    cmd->add_option(
        "--format", trace.format,
        "Output format: text, json, markdown, csv, html, svg (the timeline, or --picture flame), folded, "
        "dot or pprof (live at --at), perfetto (Chrome Trace Event JSON for Perfetto UI, chrome://tracing)");
    cmd->add_option("--at", trace.at, "Pictures of live memory: at the peak or at the end (default peak)")
        ->check(CLI::IsMember({"peak", "end"}));
    cmd->add_option("--picture", trace.picture, "--format svg: the timeline or the flame graph (default timeline)")
        ->check(CLI::IsMember({"timeline", "flame"}));
    cmd->add_option("--node-fraction", trace.node_fraction,
                    "--format dot: leave out frames below this share of the bytes (default 0.005)");
    cmd->add_option("--top", trace.top, "How many sites to list; 0 lists all (default 10)");
    cmd->add_option(
        "--device", trace.device,
        "The CUDA device whose trace to replay (default: the first OOM's device, else the one that reserves most)");
    cmd->add_option("--device-memory", trace.device_memory,
                    "The GPU's total memory (e.g. 80GiB): tells an out-of-memory caused by another process");
    cmd->add_option("--hide", trace.hide, "Drop frames whose 'file:line name' matches this regex (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--focus", trace.focus, "Keep only allocations whose stack has a frame matching this regex")
        ->allow_extra_args(false);
    cmd->add_flag(
        "--cpp-frames", trace.cpp_frames,
        "Show C++ frames in text and markdown stacks and keep them in pictures (default: a count, and dropped "
        "from pictures of stacks with Python frames)");
    cmd->add_option("--fail-on-growth", trace.fail_on_growth,
                    "Exit 3 when the most allocated memory per iteration grows faster than RATE bytes per iteration "
                    "(e.g. 10MiB): growth, not a leak verdict");
    cmd->add_flag("--fail-on-leak", trace.fail_on_leak,
                  "Exit 3 when a site is a leak (three whole iterations or more, each keeping the same allocations)");
    return cmd;
}

CLI::App* add_diff(CLI::App& app, DiffOptions& diff) {
    auto* cmd = app.add_subcommand("diff", "Compare two captures (e.g. step 100 and step 500) and rank the growth");
    cmd->add_option("files", diff.files, "The earlier and the later capture; more than two make a trend")
        ->required()
        ->expected(2, -1);
    cmd->add_option("--steps", diff.steps,
                    "Training steps of the two captures, as A,B with A < B (default: a step word in the file names)");
    cmd->add_option("--format", diff.format,
                    "Output format: text, json, markdown, csv; for snapshots also html, svg (differential flame "
                    "graph), folded (for flamegraph.pl), dot (Graphviz) or pprof");
    cmd->add_option("--side", diff.side, "Pictures: the growth (delta, default), or the bytes before or after")
        ->check(CLI::IsMember({"before", "after", "delta"}));
    cmd->add_option("--node-fraction", diff.node_fraction,
                    "--format dot: leave out frames below this share of the bytes (default 0.005)");
    cmd->add_option("--top", diff.top,
                    "How many sites to list; 0 lists all (default: 10 in text and markdown, "
                    "1000 in json and csv)");
    cmd->add_option("--min-growth", diff.min_growth, "Hide sites whose absolute change is below this size (e.g. 1MiB)");
    cmd->add_option("--fail-on-growth", diff.fail_on_growth,
                    "Exit 3 when allocated memory or any site grows faster than RATE bytes per step, or per capture "
                    "when steps are unknown (e.g. 10MiB): growth, not a leak verdict; it also compares separate runs");
    cmd->add_flag("--fail-on-leak", diff.fail_on_leak,
                  "Exit 3 when the verdict is leak (comparable captures in a known order, growth that stays)");
    cmd->add_option("--device", diff.device, "Only this CUDA device (snapshot segments and blocks, summary tables)");
    cmd->add_option("--hide", diff.hide, "Drop frames whose 'file:line name' matches this regex (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--focus", diff.focus, "Keep only blocks whose stack has a frame matching this regex (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("--granularity", diff.granularity, "Group frames by source line or by function: line or function")
        ->check(CLI::IsMember({"line", "function"}));
    cmd->add_flag(
        "--cpp-frames", diff.cpp_frames,
        "Show C++ frames in text and markdown stacks and keep them in pictures (default: a count, and dropped "
        "from pictures of stacks with Python frames)");
    return cmd;
}

CLI::App* add_trend(CLI::App& app, TrendOptions& trend) {
    auto* cmd = app.add_subcommand("trend",
                                   "Growth over many captures of one run: slope, R² and verdict per total, "
                                   "category and site");
    cmd->add_option("files", trend.files,
                    "Snapshots, or memory_summary/memory_stats files (a log with many tables), "
                    "or directories of them")
        ->required();
    cmd->add_option("--steps", trend.steps,
                    "The step of each capture, as 100,200,300 (default: step words in the file "
                    "names or log lines, else the trace time)");
    cmd->add_option("--warmup", trend.warmup, "Leave the first N intervals out of the fit (default 0)");
    cmd->add_option("--format", trend.format,
                    "Output format: text, json, markdown, csv, html, svg (totals over the steps), or folded, dot, "
                    "pprof (sites, first to last capture)");
    cmd->add_option("--side", trend.side, "folded, dot: the growth (delta, default), or the bytes before or after")
        ->check(CLI::IsMember({"before", "after", "delta"}));
    cmd->add_option("--node-fraction", trend.node_fraction,
                    "--format dot: leave out frames below this share of the bytes (default 0.005)");
    cmd->add_option("--top", trend.top,
                    "How many sites to list; 0 lists all (default: 10 in text and markdown, 1000 in "
                    "json and csv); leaks are always listed");
    cmd->add_option("--device", trend.device, "Only this CUDA device");
    cmd->add_option("--fail-on-growth", trend.fail_on_growth,
                    "Exit 3 when allocated memory or a site grows faster than RATE bytes per step, or per capture "
                    "when steps are unknown (e.g. 10MiB), by least squares: growth, not a leak verdict");
    cmd->add_flag("--fail-on-leak", trend.fail_on_leak,
                  "Exit 3 when the verdict is leak (comparable captures in a known order, enough points)");
    return cmd;
}

CLI::App* add_ranks(CLI::App& app, RanksOptions& ranks) {
    auto* cmd = app.add_subcommand("ranks",
                                   "Compare one capture per rank of one job: the ranks that stand out from the "
                                   "median, and where");
    cmd->add_option("files", ranks.files, "Snapshots, one per rank (rank3, rank_3, -r3 in the name), or directories")
        ->required();
    cmd->add_option("--format", ranks.format,
                    "Output format: text, json, markdown, csv, or folded, svg, dot, pprof of each rank's top sites "
                    "(rank;site)");
    cmd->add_option("--top", ranks.top, "How many top sites to list per rank; 0 lists all (default 10)");
    cmd->add_option("--node-fraction", ranks.node_fraction,
                    "--format dot: leave out frames below this share of the bytes (default 0.005)");
    cmd->add_option("--device", ranks.device, "Only this CUDA device");
    return cmd;
}

int finish(const CommandOutput& result) {
    if (result.stream)
        result.stream(stdout);
    else
        std::fwrite(result.text.data(), 1, result.text.size(), stdout);
    std::fflush(stdout);
    for (const auto& w : result.warnings) fmt::print(stderr, "memsnap: warning: {}\n", util::printable(w));
    if (!result.gate_message.empty()) {
        fmt::print(stderr, "memsnap: gate: {}\n", util::printable(result.gate_message));
        return static_cast<int>(ErrorKind::gate);
    }
    return 0;
}

}  // namespace

int run(int argc, char** argv) {
    configure_process();
    CLI::App app{"memsnap: find GPU memory leaks in PyTorch memory snapshots and summaries", "memsnap"};
    app.set_version_flag("--version", std::string("memsnap ") + MEMSNAP_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    app.footer(limits_footer());
    GlobalOptions globals;
    add_global_options(app, globals);
    InfoOptions info;
    DiffOptions diff;
    TraceOptions trace;
    TrendOptions trend;
    RanksOptions ranks;
    add_info(app, info);
    auto* diff_cmd = add_diff(app, diff);
    auto* trace_cmd = add_trace(app, trace);
    auto* trend_cmd = add_trend(app, trend);
    auto* ranks_cmd = add_ranks(app, ranks);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // A word where a command belongs: name it and the commands, not "a subcommand is required".
        if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
            std::vector<std::string> names;
            for (const auto* c : app.get_subcommands({})) names.push_back(c->get_name());
            fmt::print(stderr, "memsnap: error: unknown command '{}': the commands are {} (memsnap --help)\n",
                       util::printable(argv[1]), fmt::join(names, ", "));
            return static_cast<int>(ErrorKind::usage);
        }
        // --help and --version are "errors" to CLI11 that exit 0.
        const int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(ErrorKind::usage);
    }
    // The one place where errors become exit codes and one line on standard error.
    try {
        if (*diff_cmd) return finish(run_diff(diff, globals));
        if (*trace_cmd) return finish(run_trace(trace, globals));
        if (*trend_cmd) return finish(run_trend(trend, globals));
        if (*ranks_cmd) return finish(run_ranks(ranks, globals));
        return finish(run_info(info, globals));
    } catch (const Error& e) {
        fmt::print(stderr, "memsnap: error: {}\n", util::printable(e.describe()));
        return static_cast<int>(e.kind());
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "memsnap: error: out of memory (raise no limits; check the input)\n");
        return static_cast<int>(ErrorKind::input);
    } catch (const std::exception& e) {
        fmt::print(stderr, "memsnap: error: {}\n", util::printable(e.what()));
        return static_cast<int>(ErrorKind::input);
    }
}

}  // namespace memsnap::cli
