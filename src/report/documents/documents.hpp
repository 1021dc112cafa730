#pragma once
// Internal: each result of the analysis as a Document (report/model.hpp). One function per
// result type; the writers then show any Document in any format.

#include <memsnap/analysis/run.hpp>
#include <memsnap/report/model.hpp>

namespace memsnap::report::doc {

Document snapshot_info(const analysis::SnapshotInfo& info);
Document stats_info(const analysis::StatsInfo& info);
Document snapshot_diff(const analysis::SnapshotDiff& diff);
Document stats_diff(const analysis::StatsDiff& diff);
Document trace(const analysis::TraceResult& trace);
Document trend(const analysis::TrendResult& trend);
Document ranks(const analysis::RanksResult& ranks);

}  // namespace memsnap::report::doc
