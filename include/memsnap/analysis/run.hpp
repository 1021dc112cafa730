#pragma once
// The one analysis entry for every command: a Request names the command, its inputs and its
// options; run() checks the options, reads the inputs through the caller's loader (one file
// per core, each reduced as it is read when the command keeps many), analyses them and
// returns a Result for the report layer. The CLI parses options, builds the Request and
// renders the Result; nothing else.

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/gates.hpp>
#include <memsnap/analysis/info.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/analysis/trace/view.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/capture/inputs.hpp>

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace memsnap::analysis {

struct StatsInfo {
    stats::StatsCapture capture;  // the listed tables of options.device (all devices when none)
    std::optional<int> device;
    // --top N keeps the first ceil(N/2) and the last floor(N/2) tables of a long series: the
    // `omitted` tables in between would have been listed from position `omitted_at`.
    std::size_t omitted = 0, omitted_at = 0;
    std::size_t tables_total() const { return capture.tables.size() + omitted; }
    // The 1-based number of the i-th listed table in the whole capture.
    std::size_t table_number(std::size_t i) const { return i < omitted_at ? i + 1 : i + 1 + omitted; }
};

using InfoResult = std::variant<SnapshotInfo, StatsInfo>;
using DiffResult = std::variant<SnapshotDiff, StatsDiff>;

enum class Command { info, diff, trace, trend, ranks };

// A file to read, and whether it was found in a directory rather than named: a file found in
// a directory that is not a capture is skipped with a warning, a named one is an error.
using Input = capture::InputName;

// Reads one capture (the caller's limits and progress display). Throws Error.
using Loader = std::function<capture::Capture(const Input& input)>;
using TableLoader = std::function<capture::Capture(const Input& input, const stats::TableSink& tables)>;

// The stacks a picture of the result needs (Result::stacks).
enum class StackNeed {
    none,
    live,          // info: the live blocks, beside the result
    live_only,     // info: the live blocks, and no result
    diff_changed,  // diff: the stacks that changed, before and after
    diff_all,      // diff: every stack, before and after
    trace_peak,    // trace: live at the peak
    trace_end,     // trace: live at the end
    sites,         // trend and ranks: their sites as stacks
};

struct Request {
    Command command = Command::info;
    // The files as named: diff takes two (more make a trend), trace one. For trend and ranks,
    // and for info with `expand_directories`, a directory stands for the files in it.
    std::vector<std::string> names;
    bool expand_directories = false;
    Loader load;
    // For a series: a text capture's tables go to the sink one at a time, and the capture
    // returned holds none. Unset: `load` is used and the tables taken from what it returns.
    TableLoader load_tables;
    AnalysisOptions options;
    std::string steps;       // --steps as given: "A,B" for a diff, one per capture for a trend
    TraceOptions trace;      // trace (its stacks come from `stacks`)
    std::size_t warmup = 0;  // trend: intervals left out of the fit
    // The stacks the output needs for the command that runs (a diff of more than two files
    // runs as a trend); none when not given.
    std::function<StackNeed(Command)> stacks_for;
    // The interactive view's data (--format html): of the trace, the one capture of info, or
    // the second capture of a diff.
    bool view = false;
    std::string output;  // what the output is called in messages ("--format folded")
    Gates gates;         // --fail-on-growth, --fail-on-leak
    // info of many files: each file's result as soon as it and those before it are ready,
    // in input order; the Result then holds none of them.
    std::function<void(const Input&, const InfoResult&)> on_info;
};

struct Result {
    // info: one result per file read (none when streamed to Request::on_info).
    std::variant<std::vector<InfoResult>, DiffResult, TraceResult, TrendResult, RanksResult> value;
    std::optional<StackProfile> stacks;  // with Request::stacks
    std::optional<TraceView> view;       // with Request::view, for a snapshot that has segments or a trace
    Facts warnings;                      // for standard error: files skipped, devices that differ
    std::optional<GateTrip> gate;        // a gate tripped, and why (exit 3)
};

// Throws Error: usage for invalid options or an input the command cannot use, input for a
// file that cannot be read (a named file, or every file found).
Result run(const Request& request);

// Compiles every pattern of the options (--user-code, --not-user-code, --hide, --focus):
// throws Error (usage) for one that does not compile, before any file is read.
void validate(const AnalysisOptions& options);

// Throws Error: usage for invalid options, input for a device the capture does not hold.
InfoResult info(const capture::Capture& capture, const AnalysisOptions& options);

// Two snapshots, or two summary/stats captures in any mix. Throws Error (usage) for a
// snapshot against a summary; see diff_snapshots and diff_stats for the rest.
DiffResult diff(const capture::Capture& before, const capture::Capture& after, const AnalysisOptions& options);

// What the user should see on standard error besides the report (devices that differ).
const Facts& warnings_of(const DiffResult& diff);

}  // namespace memsnap::analysis
