#include <memsnap/analysis/info.hpp>

namespace memsnap::analysis {

SnapshotInfo snapshot_info(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    SnapshotInfo out;
    static_cast<SnapshotContents&>(out) = describe_snapshot(snap, options);
    out.ooms = explain_ooms(snap, options);
    if (options.device)
        for (const auto& [device, events] : ooms_by_device(snap))
            if (device != *options.device)
                out.headline.push_back(Fact(FactKind::oom_elsewhere).count("device", device).count("events", events));
    return out;
}

}  // namespace memsnap::analysis
