#pragma once
// The commands, as functions from parsed options to output. CLI11 stays in app.cpp; the
// analysis and report layers do the work. Option values are checked before any file is read.

#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/pickle/limits.hpp>

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace memsnap::cli {

struct GlobalOptions {
    pickle::Limits limits;
    std::string max_input = "8GiB";  // pipes, devices and standard input are read up to this
    analysis::SiteRules rules;
    std::string color = "auto";
};

struct InfoOptions {
    std::vector<std::string> files;  // several (or a directory) with --format jsonl or text
    std::string format = "text";
    std::string top;            // empty: 10
    std::string device;         // empty: every device
    std::string node_fraction;  // dot
    bool cpp_frames = false;    // pictures keep interpreter and dispatcher frames
};

struct TraceOptions {
    std::string file;
    std::string format = "text";
    std::string top;            // empty: 10
    std::string device;         // empty: the first device with a trace
    std::string device_memory;  // the GPU's capacity, e.g. 80GiB: tells an OOM from another process
    std::string fail_on_growth;
    bool fail_on_leak = false;
    std::vector<std::string> hide, focus;
    bool cpp_frames = false;
    std::string at = "peak";           // pictures: live at the peak or at the end
    std::string picture = "timeline";  // --format svg: the timeline, or the flame graph
    std::string node_fraction;
};

struct DiffOptions {
    std::vector<std::string> files;  // two; more make a trend
    std::string steps;               // "A,B" (a trend: one step per capture)
    std::string format = "text";
    std::string top;  // empty: 10 for text and markdown, all for json and csv
    std::string min_growth;
    std::string fail_on_growth;
    bool fail_on_leak = false;
    std::string device;
    std::vector<std::string> hide, focus;
    std::string granularity = "line";
    bool cpp_frames = false;
    std::string side = "delta";  // pictures: before, after or delta
    std::string node_fraction;
};

struct TrendOptions {
    std::vector<std::string> files;  // captures, or directories of them
    std::string steps;               // "100,200,300": one per capture
    std::string warmup;              // intervals left out of the fit
    std::string format = "text";
    std::string top;
    std::string device;
    std::string fail_on_growth;
    bool fail_on_leak = false;
    std::string side = "delta";
    std::string node_fraction;
};

struct RanksOptions {
    std::vector<std::string> files;  // one capture per rank, or directories of them
    std::string format = "text";
    std::string top;
    std::string device;
    std::string node_fraction;
};

struct CommandOutput {
    std::string text;
    std::function<void(std::FILE*)> stream;  // when set, writes the output instead of `text`
    std::vector<std::string> warnings;       // for standard error
    std::string gate_message;                // non-empty: a gate tripped (exit 3)
};

// Both throw memsnap::Error; the caller maps it to an exit code.
CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals);
CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals);
CommandOutput run_trace(const TraceOptions& options, const GlobalOptions& globals);
CommandOutput run_trend(const TrendOptions& options, const GlobalOptions& globals);
CommandOutput run_ranks(const RanksOptions& options, const GlobalOptions& globals);

}  // namespace memsnap::cli
