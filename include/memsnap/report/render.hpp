#pragma once
// The report layer's one entry: a Result of the analysis in a format. Every result becomes a
// Document (model.hpp), and each format has one writer for any Document; pictures and other
// tools' formats are drawn from the result's stacks. Writers never compute: every figure comes
// from the analysis result.

#include <memsnap/analysis/run.hpp>
#include <memsnap/report/model.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::report {

// perfetto: a trace's timeline in the Chrome Trace Event Format (Perfetto UI, chrome://tracing).
enum class Format { text, json, markdown, csv, folded, jsonl, svg, dot, html, pprof, perfetto };
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

// Throws Error (usage) for a format `command` never takes (perfetto, for any but trace),
// naming those it does: the CLI asks before reading anything, write() again.
void check_format(analysis::Command command, Format format);

using Sink = std::function<void(std::string_view)>;
// A command's whole output in `format`, given to `sink` in pieces (a long list one part at a
// time). Throws Error (usage) for a format the result cannot be shown in, before anything is
// written.
void write(const analysis::Result& result, Format format, const RenderOptions& options, const Sink& sink);

// What a command says on standard error: its warnings, one line each, and the gate that
// tripped (none when none did). Given the format, also a picture that draws nothing (a trend's
// growth when no site grew).
std::vector<std::string> warning_lines(const analysis::Result& result, Format format = Format::text,
                                       const RenderOptions& options = {});
std::optional<std::string> gate_line(const analysis::Result& result);

// Each result as its Document.
Document document(const analysis::InfoResult& result);
Document document(const analysis::DiffResult& result);
Document document(const analysis::TraceResult& result);
Document document(const analysis::TrendResult& result);
Document document(const analysis::RanksResult& result);

// A Document in a format of documents: text, json, markdown, csv, html (without pictures).
std::string render(const Document& document, Format format, const RenderOptions& options = {});
// The same for a result.
template <class Result>
std::string render(const Result& result, Format format, const RenderOptions& options = {}) {
    return render(document(result), format, options);
}
// Pictures and interop of a stack profile: folded, svg (flame graph), dot, pprof (gzipped
// profile.proto, binary).
std::string render(const analysis::StackProfile& profile, Format format, const RenderOptions& options);
// The timeline of a trace or a trend as SVG.
std::string render_timeline_svg(const analysis::TraceResult& trace);
std::string render_timeline_svg(const analysis::TrendResult& trend);

// `info --format jsonl`: one self-describing JSON object per line, per total, category and
// site (snapshots) or per table total (summaries), each naming its file, rank, step and
// device, so that a directory of captures is one table for a query engine.
struct JsonlContext {
    std::string file;
    std::optional<std::int64_t> rank, step;  // from the file name
};
std::string render_jsonl(const analysis::InfoResult& result, const JsonlContext& context);

}  // namespace memsnap::report
