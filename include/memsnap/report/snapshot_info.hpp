#pragma once
// Renderers for `memsnap info` on a snapshot. Writers never compute: they print a summary.

#include <memsnap/analysis/summary.hpp>

#include <string>

namespace memsnap::report {

std::string render_snapshot_info_text(const analysis::SnapshotSummary& summary);
// JSON with "schema_version": 1 and "kind": "snapshot"; keys sorted, 2-space indent.
std::string render_snapshot_info_json(const analysis::SnapshotSummary& summary);

}  // namespace memsnap::report
