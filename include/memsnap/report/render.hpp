#pragma once
// The one dispatch point of the report layer: a result and a format in, text out. Writers
// never compute: every figure comes from the analysis result, which holds exactly the sites
// to print.

#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/trace/trace.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::report {

enum class Format { text, json, markdown, csv, folded, jsonl, svg, dot, html, pprof };
std::optional<Format> parse_format(std::string_view name);
std::string_view to_string(Format format);

struct RenderOptions {
    bool color = false;                           // ANSI colour in text output
    bool cpp_frames = false;                      // text and Markdown show C++ frames instead of a count of them
    analysis::Side side = analysis::Side::delta;  // a diff's side in pictures (--side)
    double node_fraction = 0.005;                 // dot: frames below this share are pruned
    bool at_end = false;                          // trace pictures: live at the end, not at the peak (--at)
    bool flame_svg = false;                       // trace --format svg: the flame graph, not the timeline (--picture)
};

// The stacks `format` needs of the result of `command` (analysis::Request::stacks_for).
analysis::StackNeed stack_need(analysis::Command command, Format format, const RenderOptions& options);

using Sink = std::function<void(std::string_view)>;
// A command's whole output in `format`, given to `sink` in pieces (a snapshot diff's JSON site
// list one site at a time). Throws Error (usage) for a format the result cannot be shown in,
// before anything is written.
void write(const analysis::Result& result, Format format, const RenderOptions& options, const Sink& sink);

// Pictures and interop of a stack profile: folded, svg (flame graph), dot, pprof (gzipped
// profile.proto, binary).
std::string render(const analysis::StackProfile& profile, Format format, const RenderOptions& options);
// Self-contained HTML reports, with the profile's flame graph inline.
std::string render_html(const analysis::SnapshotDiff& diff, const analysis::StackProfile& profile,
                        const RenderOptions& options);
std::string render_html(const analysis::SnapshotInfo& info, const analysis::StackProfile& profile);
std::string render_html(const analysis::TraceResult& trace, const analysis::StackProfile& profile,
                        const RenderOptions& options);
std::string render_html(const analysis::TrendResult& trend);
// The second kind of SVG: a trace's timeline (allocated and reserved, iterations, the peak,
// the OOMs), and a trend's totals over the steps.
std::string render_timeline_svg(const analysis::TraceResult& trace);
std::string render_timeline_svg(const analysis::TrendResult& trend);

// Throws Error (usage) for a format the result has no writer for (info: text and json;
// folded needs snapshots).
std::string render(const analysis::InfoResult& result, Format format, const RenderOptions& options);
std::string render(const analysis::DiffResult& result, Format format, const RenderOptions& options);
// trace: text, json, markdown, csv.
std::string render(const analysis::TraceResult& result, Format format, const RenderOptions& options);

// trend and ranks: text, json, markdown, csv.
std::string render(const analysis::TrendResult& result, Format format, const RenderOptions& options);
std::string render(const analysis::RanksResult& result, Format format, const RenderOptions& options);

// `info --format jsonl`: one self-describing JSON object per line, per total, category and
// site (snapshots) or per table total (summaries), each naming its file, rank, step and
// device, so that a directory of captures is one table for a query engine.
struct JsonlContext {
    std::string file;
    std::optional<std::int64_t> rank, step;  // from the file name
};
std::string render_jsonl(const analysis::InfoResult& result, const JsonlContext& context);

// The same output given to `sink` in pieces: a snapshot diff's JSON site list is written one
// site at a time and never held whole, so a long list costs no memory. Throws as render does,
// before anything is written.
void write(const analysis::DiffResult& result, Format format, const RenderOptions& options, const Sink& sink);

}  // namespace memsnap::report
