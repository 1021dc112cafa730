#pragma once
// `memsnap info` of one snapshot: what it holds (sites/snapshot_info.hpp) and every
// out-of-memory event of its trace, explained (trace/trace.hpp).

#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/snapshot/model.hpp>

namespace memsnap::analysis {

struct SnapshotInfo : SnapshotContents {
    OomReport ooms;  // every oom event of the trace (of --device), explained
    Facts headline;  // for the first lines: OOMs on a device --device leaves out
};

// Throws Error: usage for invalid site rules, input when options.device is not in the capture.
SnapshotInfo snapshot_info(const snapshot::Snapshot& snap, const AnalysisOptions& options);

}  // namespace memsnap::analysis
