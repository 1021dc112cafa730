#pragma once
// Internal: one writer per format, each for any Document. render.cpp is the only caller.

#include <memsnap/analysis/trace/view.hpp>
#include <memsnap/report/model.hpp>
#include <memsnap/report/render.hpp>

#include <optional>
#include <string>
#include <vector>

namespace memsnap::report::detail {

void write_text(const Document& document, const RenderOptions& options, const Sink& sink);
void write_json(const Document& document, const Sink& sink);
void write_markdown(const Document& document, const RenderOptions& options, const Sink& sink);
void write_csv(const Document& document, const Sink& sink);
// The context every record starts with (file, rank, step from the file name).
struct JsonlFile {
    std::string file;
    std::optional<std::int64_t> rank, step;
};
void write_jsonl(const Document& document, const JsonlFile& file, const Sink& sink);
// A self-contained page: the document, with `pictures` (SVG documents) inline above it, and
// with a view, its interactive view (a script the page's CSP allows by hash).
void write_html(const Document& document, const std::vector<std::string>& pictures, const RenderOptions& options,
                const Sink& sink, const analysis::TraceView* view = nullptr);

}  // namespace memsnap::report::detail
