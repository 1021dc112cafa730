#pragma once
// Helpers for tests of the analysis and report layers: options, one-call diffs and renders.

#include <memsnap/analysis/run.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/model.hpp>

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <utility>

namespace memsnap::test {

// Every site listed, steps when given (from --steps).
inline analysis::AnalysisOptions all_sites(std::optional<std::pair<std::int64_t, std::int64_t>> steps = std::nullopt) {
    analysis::AnalysisOptions o;
    o.top = 0;
    if (steps) o.steps = {steps, "--steps", ""};
    return o;
}

inline analysis::AnalysisOptions with_steps(std::int64_t a, std::int64_t b) { return all_sites(std::make_pair(a, b)); }

// A site's stacks shown and the rest it leaves out add up to `blocks` and `bytes` (its
// change in a diff, what it holds live in a trace).
template <class Site>
void check_stacks_add_up(const Site& site, std::int64_t blocks, std::int64_t bytes) {
    std::int64_t shown_blocks = site.stacks_not_shown.delta_blocks, shown_bytes = site.stacks_not_shown.delta_bytes;
    for (const auto& st : site.stacks) {
        shown_blocks += st.delta_blocks;
        shown_bytes += st.delta_bytes;
    }
    CHECK(shown_blocks == blocks);
    CHECK(shown_bytes == bytes);
}

// Pictures are drawn from the diff's stacks (made with AnalysisOptions::stack_samples).
inline std::string render(const analysis::SnapshotDiff& d, report::Format f = report::Format::text,
                          report::RenderOptions o = {}) {
    if (f == report::Format::folded || f == report::Format::svg || f == report::Format::dot ||
        f == report::Format::pprof)
        return report::render(analysis::diff_stacks(d), f, o);
    return report::render(analysis::DiffResult{d}, f, o);
}
inline std::string render(const analysis::StatsDiff& d, report::Format f = report::Format::text) {
    return report::render(analysis::DiffResult{d}, f, {});
}
inline std::string render(const analysis::SnapshotInfo& i, report::Format f = report::Format::text) {
    return report::render(analysis::InfoResult{i}, f, {});
}
inline std::string render(const stats::StatsCapture& c, report::Format f = report::Format::text) {
    return report::render(analysis::InfoResult{analysis::StatsInfo{c, std::nullopt}}, f, {});
}

// Trace events with a time: what two captures of one process share.
inline bool has_timed_trace(const snapshot::Snapshot& snap) {
    for (std::size_t i = 0; i < snap.events.size(); ++i)
        if (snap.events[i].time_us >= 0) return true;
    return false;
}

// The share of live bytes whose blocks carry a stack: below half, a capture cannot show its
// workload (judge/comparability.hpp).
inline double stacked_share(const snapshot::Snapshot& snap) {
    std::int64_t live = 0, stacked = 0;
    for (const auto& b : snap.blocks)
        if (b.live()) {
            live += b.size;
            if (b.stack != snapshot::no_stack) stacked += b.size;
        }
    return live > 0 ? static_cast<double>(stacked) / static_cast<double>(live) : 0.0;
}

inline analysis::SnapshotInfo describe(const snapshot::Snapshot& snap, analysis::AnalysisOptions o = {}) {
    return analysis::snapshot_info(snap, o);
}

inline analysis::StatsDiff stats_diff(const stats::StatsCapture& a, const stats::StatsCapture& b,
                                      std::optional<std::pair<std::int64_t, std::int64_t>> steps = std::nullopt) {
    return analysis::diff_stats(a, b, all_sites(steps));
}

// --fail-on-growth RATE on a diff: the gate's line, or none when it passes.
inline std::optional<std::string> growth_gate(const analysis::DiffResult& d, std::int64_t rate) {
    analysis::Gates gates;
    gates.growth_per_step = rate;
    analysis::Result result;
    result.gate = analysis::check_gates(d, gates);
    return report::gate_line(result);
}
inline std::optional<std::string> gate(const analysis::StatsDiff& d, std::int64_t rate) {
    return growth_gate(analysis::DiffResult{d}, rate);
}
inline std::optional<std::string> gate(const analysis::SnapshotDiff& d, std::int64_t rate) {
    return growth_gate(analysis::DiffResult{d}, rate);
}

}  // namespace memsnap::test

namespace memsnap::test {
inline std::string render_json(const analysis::SnapshotInfo& i) { return render(i, report::Format::json); }
}  // namespace memsnap::test
