#pragma once
// Internal: the pictures and other tools' formats, drawn from stacks (a stack profile) or from
// a timeline. render.cpp is the only caller.

#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/report/render.hpp>

#include <string>

namespace memsnap::report::detail {

std::string profile_folded(const analysis::StackProfile& profile, analysis::Side side);
std::string profile_svg(const analysis::StackProfile& profile, analysis::Side side);
std::string profile_dot(const analysis::StackProfile& profile, analysis::Side side, double node_fraction);
// A diff's `delta` side carries the after side as positive samples and the before side as
// negative ones (pprof -diff_base's way); `before` and `after` carry that side alone.
std::string profile_pprof(const analysis::StackProfile& profile, analysis::Side side);
std::string trace_timeline_svg(const analysis::TraceResult& trace);
std::string trend_svg(const analysis::TrendResult& trend);
// The trace in the Chrome Trace Event Format (JSON), streamed to `sink`.
void trace_perfetto(const analysis::TraceResult& trace, const Sink& sink);

}  // namespace memsnap::report::detail
