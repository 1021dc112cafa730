#include "origin.hpp"

#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/diff/match_blocks.hpp>
#include <memsnap/analysis/diff/rank.hpp>
#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/judge/trace_overlap.hpp>
#include <memsnap/analysis/sites/totals.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <future>
#include <set>

namespace memsnap::analysis {

const std::array<TotalsChange::Field, 8>& TotalsChange::fields() {
    static const std::array<Field, 8> f = {{
        {"allocated_bytes", &TotalsChange::allocated},
        {"reserved_bytes", &TotalsChange::reserved},
        {"active_bytes", &TotalsChange::active},
        {"requested_bytes", &TotalsChange::requested},
        {"inactive_bytes", &TotalsChange::inactive},
        {"inactive_split_bytes", &TotalsChange::inactive_split},
        {"releasable_bytes", &TotalsChange::releasable},
        {"non_releasable_bytes", &TotalsChange::non_releasable},
    }};
    return f;
}

namespace {

using snapshot::Snapshot;

TotalsChange totals_change(const MemoryTotals& a, const MemoryTotals& b, const util::Steps& steps) {
    auto change = [&](std::int64_t before, std::int64_t after) {
        return TotalChange{before, after, after - before, per_step(after - before, steps)};
    };
    TotalsChange t;
    t.allocated = change(a.allocated_bytes, b.allocated_bytes);
    t.reserved = change(a.reserved_bytes, b.reserved_bytes);
    t.active = change(a.active_bytes, b.active_bytes);
    t.requested = change(a.requested_bytes, b.requested_bytes);
    t.inactive = change(a.inactive_bytes, b.inactive_bytes);
    t.inactive_split = change(a.inactive_split_bytes, b.inactive_split_bytes);
    t.releasable = change(a.releasable_bytes, b.releasable_bytes);
    t.non_releasable = change(a.non_releasable_bytes, b.non_releasable_bytes);
    return t;
}

// Each device's totals on both sides; a device one side lacks counts as empty there.
std::vector<DeviceTotalsChange> device_totals(const Snapshot& before, const Snapshot& after, const util::Steps& steps) {
    const auto a = totals_by_device(before), b = totals_by_device(after);
    std::set<int> devices;
    for (const auto& [d, t] : a) devices.insert(d);
    for (const auto& [d, t] : b) devices.insert(d);
    std::vector<DeviceTotalsChange> out;
    for (const int d : devices) {
        const auto ta = a.count(d) ? a.at(d) : MemoryTotals{};
        const auto tb = b.count(d) ? b.at(d) : MemoryTotals{};
        out.push_back({d, totals_change(ta, tb, steps)});
    }
    return out;
}

DeviceSets device_sets(const Snapshot& before, const Snapshot& after, std::optional<int> device) {
    if (device) return {{*device}, {*device}};
    const auto a = devices_of(before), b = devices_of(after);
    return {{a.begin(), a.end()}, {b.begin(), b.end()}};
}

std::int64_t trace_stacks(const Snapshot& snap, std::optional<int> device) {
    std::int64_t n = 0;
    for (const auto& e : snap.events)
        if (e.stack != snapshot::no_stack && (!device || e.device == *device)) ++n;
    return n;
}

}  // namespace

namespace {

void add_warnings(const Snapshot& before, const Snapshot& after, SnapshotDiff& diff) {
    if (diff.devices.differ())
        diff.warnings.push_back(Fact(FactKind::devices_differ)
                                    .text("before", fmt::format("{}", fmt::join(diff.devices.before, ", ")))
                                    .text("after", fmt::format("{}", fmt::join(diff.devices.after, ", "))));
    for (const auto* snap : {&before, &after})
        for (const auto& w : snap->warnings)
            diff.warnings.push_back(Fact(FactKind::reader_warning).text("file", snap->source.path).text("text", w));
}

void count_blocks(const std::vector<SiteGroups>& grouped, SnapshotDiff& diff) {
    for (const auto& g : grouped) {
        diff.live_blocks_before += g.change.before_blocks;
        diff.live_blocks_after += g.change.after_blocks;
        diff.survivors += g.change.survivor_blocks;
        diff.new_blocks += g.change.new_blocks;
        diff.gone_blocks += g.change.gone_blocks;
    }
}

void take_ranked(RankedSites ranked, SnapshotDiff& diff) {
    diff.sites = std::move(ranked.sites);
    diff.sites_total = ranked.total;
    diff.sites_beyond_top = ranked.beyond_top;
    diff.sites_below_min_growth = ranked.below_min_growth;
    diff.sites_not_listed_delta_bytes = ranked.not_listed_delta_bytes;
    diff.fastest_site = std::move(ranked.fastest);
    diff.stack_samples = std::move(ranked.stack_samples);
    diff.frame_table = std::move(ranked.frame_table);
}

}  // namespace

SnapshotDiff diff_snapshots(const Snapshot& before, const Snapshot& after, const AnalysisOptions& options) {
    require_device(before, options.device);
    require_device(after, options.device);
    SnapshotDiff diff;
    diff.before_file = before.source.path;
    diff.after_file = after.source.path;
    diff.steps = options.steps;
    diff.device = options.device;
    diff.devices = device_sets(before, after, options.device);
    add_warnings(before, after, diff);
    // The traces are compared on another core while the blocks are matched here.
    auto traces = std::async(std::launch::async, [&] { return compare_traces(before, after, options.device); });
    StackIndex index({&before, &after}, options.rules, options.stacks);
    auto old_blocks = collect_blocks(before, 0, index, options.device);
    auto new_blocks = collect_blocks(after, 1, index, options.device);
    diff.stacks_recorded = old_blocks.any_recorded || new_blocks.any_recorded;
    diff.stacks_recorded_before = old_blocks.any_recorded;
    diff.stacks_recorded_after = new_blocks.any_recorded;
    // One side's live memory without stacks: it has no site, so every site of the other reads
    // as gone or new and its categories as moved to unknown. Said first, before those tables,
    // with why: no stacks recorded, or blocks made before recording began.
    if (diff.stacks_recorded && diff.stacks_recorded_before != diff.stacks_recorded_after) {
        const bool first = !diff.stacks_recorded_before;
        if (!(first ? old_blocks : new_blocks).live.empty())
            diff.headline.push_back(Fact(FactKind::stacks_one_side)
                                        .text("side", first ? "first" : "second")
                                        .count("trace_stacks", trace_stacks(first ? before : after, options.device)));
    }
    diff.pending_free_before = old_blocks.pending_free_bytes;
    diff.pending_free_after = new_blocks.pending_free_bytes;
    auto match = match_blocks(old_blocks, new_blocks);
    // Each stage's input is let go once the next is built: the peak of a diff of many sites is
    // the ranking, with the sites, their stacks and the ranked list all held.
    old_blocks = {};
    new_blocks = {};
    diff.categories = match.categories;
    diff.totals =
        totals_change(compute_totals(before, options.device), compute_totals(after, options.device), options.steps);
    const auto overlap = traces.get();
    // Counted by the trace walk when it read every event.
    const std::int64_t stacks_in_traces =
        overlap.with_stack ? static_cast<std::int64_t>(*overlap.with_stack)
                           : trace_stacks(before, options.device) + trace_stacks(after, options.device);
    auto grouped = group_sites(match, index, options.steps);
    diff.comparability = detail::compare_origins({before, after, match, index, diff.devices, options.device, overlap,
                                                  grouped, diff.totals.allocated.before, diff.totals.allocated.after});
    // Each device is judged on its own only where both captures hold the same devices: a device
    // index of one program says nothing of another's.
    const bool per_device = match.several_devices && diff.devices.before == diff.devices.after;
    match = {};
    auto explanation =
        explain({diff.totals, grouped, index, diff.comparability, options.steps, diff.stacks_recorded, stacks_in_traces,
                 !options.stacks.focus.empty(), diff.pending_free_before, diff.pending_free_after,
                 per_device ? device_totals(before, after, options.steps) : std::vector<DeviceTotalsChange>{}});
    diff.verdict = explanation.verdict;
    diff.evidence = std::move(explanation.evidence);
    diff.advice = std::move(explanation.advice);
    diff.overall = std::move(explanation.overall);
    diff.convergence = explanation.convergence;
    diff.notes = std::move(explanation.notes);
    count_blocks(grouped, diff);
    const SiteDiagnoser diagnose(index, options.steps, diff.comparability);
    take_ranked(rank_sites(std::move(grouped), explanation.sites, diagnose, index, diff.stacks_recorded,
                           {options.top, options.min_growth, options.stack_samples}),
                diff);
    return diff;
}

namespace {

StackProfile diff_profile(const SnapshotDiff& diff) {
    StackProfile out;
    out.subject = {ProfileSubject::Kind::diff, diff.before_file, diff.after_file, 0, 0};
    out.measure = "bytes";
    out.differential = true;
    out.frame_table = diff.frame_table;
    return out;
}

}  // namespace

StackProfile diff_stacks(const SnapshotDiff& diff) {
    auto out = diff_profile(diff);
    out.samples = diff.stack_samples;
    return out;
}

StackProfile take_diff_stacks(SnapshotDiff& diff) {
    auto out = diff_profile(diff);
    out.samples = std::move(diff.stack_samples);
    diff.stack_samples = {};
    return out;
}

}  // namespace memsnap::analysis
