#include <memsnap/analysis/info.hpp>

namespace memsnap::analysis {

SnapshotInfo snapshot_info(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    SnapshotInfo out;
    static_cast<SnapshotContents&>(out) = describe_snapshot(snap, options);
    out.ooms = explain_ooms(snap, options);
    return out;
}

}  // namespace memsnap::analysis
