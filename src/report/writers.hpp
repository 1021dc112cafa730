#pragma once
// Internal: one function per (result, format) pair; render.cpp is the only caller.

#include <memsnap/analysis/run.hpp>
#include <memsnap/report/render.hpp>

#include <string>
#include <string_view>

namespace memsnap::report::detail {

std::string snapshot_info_text(const analysis::SnapshotInfo& info, const RenderOptions& options);
std::string snapshot_info_json(const analysis::SnapshotInfo& info);
std::string stats_info_text(const analysis::StatsInfo& info);
std::string stats_info_json(const analysis::StatsInfo& info);

std::string snapshot_diff_text(const analysis::SnapshotDiff& diff, const RenderOptions& options);
void snapshot_diff_json(const analysis::SnapshotDiff& diff, const Sink& sink);
std::string snapshot_diff_markdown(const analysis::SnapshotDiff& diff, const RenderOptions& options);
std::string snapshot_diff_csv(const analysis::SnapshotDiff& diff);

std::string trace_text(const analysis::TraceResult& trace, const RenderOptions& options);
std::string trace_json(const analysis::TraceResult& trace);
std::string trace_markdown(const analysis::TraceResult& trace, const RenderOptions& options);
std::string trace_csv(const analysis::TraceResult& trace);

std::string trend_text(const analysis::TrendResult& trend, const RenderOptions& options);
std::string trend_json(const analysis::TrendResult& trend);
std::string trend_markdown(const analysis::TrendResult& trend, const RenderOptions& options);
std::string trend_csv(const analysis::TrendResult& trend);

std::string ranks_text(const analysis::RanksResult& ranks, const RenderOptions& options);
std::string ranks_json(const analysis::RanksResult& ranks);
std::string ranks_markdown(const analysis::RanksResult& ranks, const RenderOptions& options);
std::string ranks_csv(const analysis::RanksResult& ranks);

// Pictures and interop of a stack profile.
std::string profile_folded(const analysis::StackProfile& profile, analysis::Side side);
std::string profile_svg(const analysis::StackProfile& profile, analysis::Side side);
std::string profile_dot(const analysis::StackProfile& profile, analysis::Side side, double node_fraction);
std::string profile_pprof(const analysis::StackProfile& profile);
std::string trace_timeline_svg(const analysis::TraceResult& trace);
std::string trend_svg(const analysis::TrendResult& trend);

std::string snapshot_diff_html(const analysis::SnapshotDiff& diff, const analysis::StackProfile& profile,
                               const RenderOptions& options);
std::string snapshot_info_html(const analysis::SnapshotInfo& info, const analysis::StackProfile& profile);
std::string trace_html(const analysis::TraceResult& trace, const analysis::StackProfile& profile,
                       const RenderOptions& options);
std::string trend_html(const analysis::TrendResult& trend);

std::string info_jsonl(const analysis::InfoResult& info, const JsonlContext& context);

std::string stats_diff_text(const analysis::StatsDiff& diff);
std::string stats_diff_json(const analysis::StatsDiff& diff);
std::string stats_diff_markdown(const analysis::StatsDiff& diff);
std::string stats_diff_csv(const analysis::StatsDiff& diff);

}  // namespace memsnap::report::detail
