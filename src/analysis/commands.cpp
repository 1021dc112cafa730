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

namespace {

__extension__ using Wide = __int128;

std::optional<std::string> gate(const SnapshotDiff& d, std::int64_t rate) {
    const auto unit = d.steps.known() ? "step" : "capture";
    if (d.totals.allocated.per_step > static_cast<double>(rate))
        return fmt::format("allocated memory grows {}, over the limit of {}/{}",
                           util::rate(d.totals.allocated.per_step, d.steps.known()), util::human_bytes(rate), unit);
    if (d.fastest_site && d.fastest_site->growth_bytes_per_step > static_cast<double>(rate))
        return fmt::format("site {} grows {}, over the limit of {}/{}", util::printable(d.fastest_site->site.label()),
                           util::rate(d.fastest_site->growth_bytes_per_step, d.steps.known()), util::human_bytes(rate),
                           unit);
    return std::nullopt;
}

std::optional<std::string> gate(const StatsDiff& diff, std::int64_t rate) {
    std::string out;
    for (const auto& d : diff.devices) {
        const auto it = d.metrics.find("allocated_bytes.all.current");
        if (it == d.metrics.end()) continue;
        const auto& delta = it->second.delta;
        const bool per_step = diff.steps.known();
        const std::int64_t span =
            per_step ? diff.steps.distance() : static_cast<std::int64_t>(std::max<std::size_t>(d.series.size(), 2) - 1);
        if (static_cast<Wide>(delta.low) <= static_cast<Wide>(rate) * span) continue;
        out += fmt::format(
            "{}allocated memory (allocated_bytes.all.current) on {} grows by at least {} per {} (limit "
            "{} per {}): {} over {} {}(s)",
            out.empty() ? "" : "; ", util::device_name(d.device), util::signed_bytes(range_divide(delta, span).low),
            per_step ? "step" : "capture", util::human_bytes(rate), per_step ? "step" : "capture",
            util::format_delta(delta, true), span, per_step ? "step" : "capture");
    }
    if (out.empty()) return std::nullopt;
    return out;
}

}  // namespace

std::optional<std::string> check_growth_gate(const DiffResult& diff, std::int64_t bytes_per_step) {
    return std::visit([&](const auto& d) { return gate(d, bytes_per_step); }, diff);
}

const std::vector<std::string>& warnings_of(const DiffResult& diff) {
    return std::visit([](const auto& d) -> const std::vector<std::string>& { return d.warnings; }, diff);
}

}  // namespace memsnap::analysis
