#include <memsnap/analysis/run.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

namespace memsnap::analysis {

void validate(const AnalysisOptions& options) {
    const FrameClassifier rules(options.rules);
    util::Pattern::any_of(options.stacks.hide, "--hide");
    util::Pattern::any_of(options.stacks.focus, "--focus");
}

InfoResult info(const capture::Capture& capture, const AnalysisOptions& options) {
    if (capture.is_snapshot()) return snapshot_info(capture.snapshot(), options);
    const auto& all = capture.stats();
    const auto tables = tables_of(all, options.device);
    StatsInfo out;
    out.device = options.device;
    out.capture.file = all.file;
    out.capture.kind = all.kind;
    if (options.top != 0 && tables.size() > options.top) {
        out.omitted_at = (options.top + 1) / 2;
        out.omitted = tables.size() - options.top;
    }
    for (std::size_t i = 0; i < tables.size(); ++i)
        if (i < out.omitted_at || i >= out.omitted_at + out.omitted) out.capture.tables.push_back(*tables[i]);
    return out;
}

DiffResult diff(const capture::Capture& before, const capture::Capture& after, const AnalysisOptions& options) {
    if (before.is_snapshot() != after.is_snapshot())
        throw usage_error(
            fmt::format("cannot diff a snapshot against a memory_summary/memory_stats capture ({} is a "
                        "{}, {} is a {}); give two of the same kind",
                        before.path, before.kind_name(), after.path, after.kind_name()));
    if (before.is_snapshot()) return diff_snapshots(before.snapshot(), after.snapshot(), options);
    return diff_stats(before.stats(), after.stats(), options);
}

const Facts& warnings_of(const DiffResult& diff) {
    return std::visit([](const auto& d) -> const Facts& { return d.warnings; }, diff);
}

}  // namespace memsnap::analysis
