#include <memsnap/analysis/judge/comparability.hpp>

#include <algorithm>
#include <map>
#include <string_view>

namespace memsnap::analysis {

namespace {

// A tenth of a capture's bytes with a stack may sit at sites the other capture lacks: small
// one-off tensors, a metric buffer. More is another workload.
constexpr double kOneSidedShare = 0.10;
// A capture whose live bytes are mostly without a stack cannot show its workload.
constexpr double kStackedShare = 0.5;

}  // namespace

std::string_view to_string(Answer answer) {
    switch (answer) {
        case Answer::yes:
            return "yes";
        case Answer::no:
            return "no";
        case Answer::unknown:
            return "unknown";
    }
    return "unknown";
}

bool other_checkout(const std::string& a, const std::string& b) {
    return !a.empty() && !b.empty() && !a.starts_with(b) && !b.starts_with(a);
}

std::optional<Fact> versions_differ(stats::TableLayout::Generation before, stats::TableLayout::Generation after) {
    stats::TableLayout a, b;
    a.generation = before;
    b.generation = after;
    if (!a.tells_torch_version() || !b.tells_torch_version() || before == after) return std::nullopt;
    return Fact(FactKind::versions_differ).text("before", a.text()).text("after", b.text());
}

std::optional<Fact> backend_differs(bool before_async, bool after_async) {
    if (before_async == after_async) return std::nullopt;
    const auto name = [](bool async) { return async ? "cudaMallocAsync" : "native"; };
    return Fact(FactKind::setting_differs)
        .text("name", "backend")
        .text("before", name(before_async))
        .text("after", name(after_async));
}

std::optional<Fact> setting_differs(const AllocatorSettings* before, const AllocatorSettings* after) {
    if (!before || !after) return std::nullopt;
    const std::map<std::string_view, std::string_view> later(after->begin(), after->end());
    for (const auto& [key, value] : *before)
        if (const auto it = later.find(key); it != later.end() && it->second != value)
            return Fact(FactKind::setting_differs)
                .text("name", key)
                .text("before", value)
                .text("after", std::string(it->second));
    return std::nullopt;
}

void judge_process(const ProcessEvidence& e, Comparability& out) {
    Facts against;
    for (const auto* fact :
         {&e.devices_differ, &e.roots_differ, &e.main_scripts_differ, &e.setting_differs, &e.versions_differ})
        if (*fact) against.push_back(**fact);
    if (e.overlap_apart > 0) against.push_back(Fact(FactKind::traces_overlap_apart).count("events", e.overlap_apart));
    // A clock or a cumulative counter that runs backwards in the order given says the order is
    // wrong (files given in reverse), or that these are separate runs, or (a counter) a reset:
    // which one cannot be told, so it takes the order, not the process. Between runs shown to
    // be separate it says nothing: two machines' clocks, two processes' counters.
    if (against.empty())
        for (const auto* fact : {&e.counter_falls, &e.order_reversed})
            if (*fact) {
                out.order_known = false;
                out.order_evidence.push_back(**fact);
            }
    if (!against.empty()) {
        out.same_process = Answer::no;
        out.process_evidence = std::move(against);
        return;
    }
    if (e.shared_events > 0) {
        out.same_process = Answer::yes;
        out.process_evidence.push_back(Fact(FactKind::traces_share_events)
                                           .count("events", e.shared_events)
                                           .flag("sampled", e.shared_sampled)
                                           .flag("same_trace", e.same_trace));
        return;
    }
    out.same_process = Answer::unknown;
    auto& facts = out.process_evidence;
    if (e.traces_apart) facts.push_back(*e.traces_apart);
    if (e.order_reversed) facts.push_back(Fact(FactKind::traces_apart).flag("full", false));
    if (e.survivors > 0) facts.push_back(Fact(FactKind::blocks_survive).count("blocks", e.survivors));
    if (e.shared_segments > 0) facts.push_back(Fact(FactKind::segments_survive).count("segments", e.shared_segments));
    if (e.nothing_shared) facts.push_back(*e.nothing_shared);
    // Counters that grow fit one process only where none runs backwards.
    if (e.counters_grow && !e.counter_falls) facts.push_back(Fact(FactKind::counters_grow));
    if (facts.empty()) facts.push_back(Fact(FactKind::no_process_evidence));
}

namespace {

struct OneSided {
    std::int64_t bytes = 0;
    std::size_t sites = 0;
    const SiteLevels* largest = nullptr;
};

OneSided one_sided(const std::vector<SiteLevels>& sites, bool after_side) {
    OneSided out;
    for (const auto& s : sites) {
        const std::int64_t here = after_side ? s.after : s.before;
        const std::int64_t there = after_side ? s.before : s.after;
        if (here <= 0 || there > 0) continue;
        out.bytes += here;
        ++out.sites;
        if (!out.largest || here > (after_side ? out.largest->after : out.largest->before)) out.largest = &s;
    }
    return out;
}

double share_of(std::int64_t part, std::int64_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

void judge_workload(const WorkloadEvidence& e, Comparability& out) {
    auto& facts = out.workload_evidence;
    // Within one process, sites come and go with what the program does (a leak adds some):
    // nothing to show.
    if (out.same_process == Answer::yes) {
        out.same_workload = Answer::yes;
        facts.push_back(Fact(FactKind::workload_one_process));
        return;
    }
    if (e.one_log) {
        out.same_workload = Answer::yes;
        facts.push_back(Fact(FactKind::one_log));
        return;
    }
    const bool covered = e.allocated_before > 0 && e.allocated_after > 0 &&
                         share_of(e.stacked_before, e.allocated_before) >= kStackedShare &&
                         share_of(e.stacked_after, e.allocated_after) >= kStackedShare;
    if (!covered) {
        out.same_workload = Answer::unknown;
        facts.push_back(Fact(FactKind::no_stacks_to_compare)
                            .real("stacked_before", share_of(e.stacked_before, e.allocated_before))
                            .real("stacked_after", share_of(e.stacked_after, e.allocated_after))
                            .bytes("allocated_before", e.allocated_before)
                            .bytes("allocated_after", e.allocated_after));
        return;
    }
    bool same = true;
    for (const bool after_side : {false, true}) {
        const auto side = one_sided(e.sites, after_side);
        const std::int64_t whole = after_side ? e.stacked_after : e.stacked_before;
        const double share = share_of(side.bytes, whole);
        if (share <= kOneSidedShare) continue;
        same = false;
        facts.push_back(Fact(FactKind::sites_one_side)
                            .text("side", after_side ? "after" : "before")
                            .count("sites", static_cast<std::int64_t>(side.sites))
                            .bytes("bytes", side.bytes)
                            .real("share", share)
                            .text("example", side.largest ? side.largest->label : std::string()));
    }
    if (same) {
        std::size_t shared = 0;
        std::int64_t bytes = 0;
        for (const auto& s : e.sites)
            if (s.before > 0 && s.after > 0) {
                ++shared;
                bytes += s.after;
            }
        facts.push_back(Fact(FactKind::same_sites)
                            .count("sites", static_cast<std::int64_t>(shared))
                            .real("share", share_of(bytes, e.stacked_after)));
    }
    out.same_workload = same ? Answer::yes : Answer::no;
}

}  // namespace memsnap::analysis
