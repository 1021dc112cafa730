#include "app.hpp"

#include "commands.hpp"

#include <memsnap/error.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>

namespace memsnap::cli {

namespace {

void add_global_options(CLI::App& app, GlobalOptions& g) {
    app.add_option("--max-depth", g.limits.max_depth,
                   "Refuse pickles nested deeper than this (default 200)")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-memo", g.limits.max_memo_entries,
                   "Refuse pickles with more memo entries than this (default 134217728)")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-container", g.limits.max_container_length,
                   "Refuse containers with more items than this (default 268435456)")
        ->check(CLI::PositiveNumber);
    app.add_option("--max-string", g.limits.max_string_length,
                   "Refuse strings longer than this many bytes (default 67108864)")
        ->check(CLI::PositiveNumber);
    app.add_option("--user-code", g.rules.user_code,
                   "Regex on frame file names that marks user code (default: Python files)");
    app.add_option("--not-user-code", g.rules.not_user_code,
                   "Regex on frame file names that are never user code (default: site-packages, "
                   "dist-packages, torch, the standard library)");
    app.add_option("--color", g.color, "Colour in text output: auto, always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}));
}

}  // namespace

int run(int argc, char** argv) {
    CLI::App app{"memsnap: find GPU memory leaks in PyTorch memory snapshots and summaries",
                 "memsnap"};
    app.set_version_flag("--version", std::string("memsnap ") + MEMSNAP_VERSION);
    app.require_subcommand(1);
    app.fallthrough();

    GlobalOptions globals;
    add_global_options(app, globals);

    InfoOptions info;
    auto* info_cmd = app.add_subcommand(
        "info", "Describe one capture: snapshot pickle/JSON, memory_summary text or memory_stats");
    info_cmd->add_option("file", info.file, "Capture file ('-' reads standard input)")->required();
    info_cmd->add_option("--format", info.format, "Output format: text or json")
        ->check(CLI::IsMember({"text", "json"}));
    info_cmd->add_option("--top", info.top, "How many allocation sites to list; 0 lists all (default 10)")
        ->check(CLI::NonNegativeNumber);

    DiffOptions diff;
    auto* diff_cmd = app.add_subcommand(
        "diff", "Compare two captures (e.g. step 100 and step 500) and rank the growth");
    diff_cmd->add_option("before", diff.before, "The earlier capture")->required();
    diff_cmd->add_option("after", diff.after, "The later capture")->required();
    diff_cmd->add_option("--steps", diff.steps,
                         "Training steps of the two captures, as A,B (default: from file names)");
    diff_cmd->add_option("--format", diff.format,
                         "Output format: text, json, markdown, csv, or folded (grown stacks for "
                         "flamegraph.pl; snapshots only)")
        ->check(CLI::IsMember({"text", "json", "markdown", "csv", "folded"}));
    diff_cmd->add_option("--top", diff.top,
                         "How many sites to list; 0 lists all (default: 10 in text and markdown, "
                         "all in json and csv)")
        ->check(CLI::NonNegativeNumber);
    diff_cmd->add_option("--min-growth", diff.min_growth,
                         "Hide sites whose absolute change is below this size (e.g. 1MiB)");
    diff_cmd->add_option("--fail-on-growth", diff.fail_on_growth,
                         "Exit 3 when allocated memory or any site grows faster than RATE bytes "
                         "per step (e.g. 10MiB)");
    diff_cmd->add_option("--device", diff.device,
                         "Only this CUDA device (snapshot segments and blocks, summary tables)");
    diff_cmd->add_option("--hide", diff.hide,
                         "Drop frames whose 'file:line name' matches this regex (repeatable)")
        ->allow_extra_args(false);
    diff_cmd->add_option("--focus", diff.focus,
                         "Keep only blocks whose stack has a frame matching this regex (repeatable)")
        ->allow_extra_args(false);
    diff_cmd->add_option("--granularity", diff.granularity,
                         "Group frames by source line or by function: line or function")
        ->check(CLI::IsMember({"line", "function"}));

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help and --version are "errors" to CLI11 that exit 0.
        const int code = app.exit(e);
        return code == 0 ? 0 : static_cast<int>(ErrorKind::usage);
    }

    try {
        CommandOutput result;
        if (*info_cmd) result = run_info(info, globals);
        if (*diff_cmd) result = run_diff(diff, globals);
        std::fwrite(result.text.data(), 1, result.text.size(), stdout);
        std::fflush(stdout);
        if (!result.gate_message.empty()) {
            fmt::print(stderr, "memsnap: gate: {}\n", result.gate_message);
            return static_cast<int>(ErrorKind::gate);
        }
        return 0;
    } catch (const Error& e) {
        fmt::print(stderr, "memsnap: error: {}\n", e.describe());
        return static_cast<int>(e.kind());
    } catch (const std::bad_alloc&) {
        fmt::print(stderr, "memsnap: error: out of memory (raise no limits; check the input)\n");
        return static_cast<int>(ErrorKind::input);
    } catch (const std::exception& e) {
        fmt::print(stderr, "memsnap: error: {}\n", e.what());
        return static_cast<int>(ErrorKind::input);
    }
}

}  // namespace memsnap::cli
