#pragma once
// Internal: the interactive view in an HTML page. Its data (TraceView) as compact JSON for a
// <script type="application/json"> element, and the page's one script with its CSP hash.

#include <memsnap/analysis/trace/view.hpp>

#include <string>

namespace memsnap::report::detail {

// The view's data as JSON, with every '<' escaped so that it cannot close its element.
std::string view_json(const analysis::TraceView& view);

// The elements that end the page's body: the data, then the script.
std::string view_elements(const analysis::TraceView& view);

// "'sha256-…'" of the page's script, for its Content-Security-Policy.
std::string view_script_source();

}  // namespace memsnap::report::detail
