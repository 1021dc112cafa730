#include "origin.hpp"

#include "analysis/sites/main_script.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace memsnap::analysis::detail {

namespace {

using snapshot::Snapshot;

// torch's default max_entries: a trace this long may have overwritten its oldest events.
constexpr std::size_t kDefaultMaxEntries = 1'000'000;

std::int64_t shared_segments(const Snapshot& before, const Snapshot& after, std::optional<int> device) {
    auto keys = [device](const Snapshot& s) {
        std::vector<std::tuple<int, std::int64_t, std::int64_t>> out;
        for (const auto& seg : s.segments)
            if (!device || seg.device == *device) out.emplace_back(seg.device, seg.address, seg.total_size);
        std::sort(out.begin(), out.end());
        return out;
    };
    const auto a = keys(before), b = keys(after);
    std::vector<std::tuple<int, std::int64_t, std::int64_t>> common;
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    return static_cast<std::int64_t>(common.size());
}

const AllocatorSettings* settings_of(const Snapshot& s) {
    return s.has_allocator_settings ? &s.allocator_settings : nullptr;
}

std::string device_list(const std::vector<int>& devices) {
    return devices.empty() ? std::string("none") : fmt::format("{}", fmt::join(devices, ", "));
}

void trace_evidence(const PairOrigin& p, ProcessEvidence& e) {
    const auto& t = p.trace;
    e.shared_events = static_cast<std::int64_t>(t.shared);
    // One moment twice (a file diffed with itself, or a copy): the same trace end to end and the
    // same memory; nothing ran between them.
    e.same_trace = t.shared > 0 && t.shared == t.overlapping && t.before_first == t.after_first &&
                   t.before_last == t.after_last && p.allocated_before == p.allocated_after &&
                   p.before.events.size() == p.after.events.size() &&
                   p.before.segments.size() == p.after.segments.size();
    if (t.overlapping > 0 && t.shared == 0) e.overlap_apart = static_cast<std::int64_t>(t.overlapping);
    if (!t.before_first || !t.after_first || t.shared > 0) return;
    if (*t.after_last < *t.before_first) {
        e.order_reversed = Fact(FactKind::trace_order_reversed).count("gap_us", *t.before_first - *t.after_last);
        return;
    }
    if (t.overlapping == 0) {
        const bool full = p.before.events.size() >= kDefaultMaxEntries || p.after.events.size() >= kDefaultMaxEntries;
        e.traces_apart = Fact(FactKind::traces_apart).flag("full", full);
    }
}

WorkloadEvidence workload_of(const PairOrigin& p) {
    WorkloadEvidence w;
    w.allocated_before = p.allocated_before;
    w.allocated_after = p.allocated_after;
    for (std::size_t i = 0; i < p.sites.size(); ++i) {
        const auto& c = p.sites[i].change;
        if (!c.has_stack) continue;
        w.stacked_before += c.before_bytes;
        w.stacked_after += c.after_bytes;
        w.sites.push_back({i, c.site.label(), c.before_bytes, c.after_bytes});
    }
    return w;
}

}  // namespace

Comparability compare_origins(const PairOrigin& p) {
    ProcessEvidence e;
    trace_evidence(p, e);
    if (p.devices.differ())
        e.devices_differ = Fact(FactKind::devices_differ)
                               .text("before", device_list(p.devices.before))
                               .text("after", device_list(p.devices.after));
    if (other_checkout(p.index.project_root(0), p.index.project_root(1)))
        e.roots_differ =
            Fact(FactKind::roots_differ).text("before", p.index.project_root(0)).text("after", p.index.project_root(1));
    if (const auto a = main_script(p.before), b = main_script(p.after); a && b && *a != *b)
        e.main_scripts_differ = Fact(FactKind::main_scripts_differ).text("before", *a).text("after", *b);
    e.setting_differs = setting_differs(settings_of(p.before), settings_of(p.after));
    e.survivors = p.match.survivors;
    e.shared_segments = shared_segments(p.before, p.after, p.device);
    if (p.match.live_before > 0 && p.match.live_after > 0 && e.survivors == 0 && e.shared_segments == 0)
        e.nothing_shared =
            Fact(FactKind::nothing_shared).count("before", p.match.live_before).count("after", p.match.live_after);
    Comparability c;
    judge_process(e, c);
    judge_workload(workload_of(p), c);
    return c;
}

}  // namespace memsnap::analysis::detail
