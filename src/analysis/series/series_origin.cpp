#include "series_origin.hpp"

#include "analysis/sites/relative_sites.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

namespace memsnap::analysis::detail {

namespace {

std::vector<int> devices(const SnapshotContents& c) {
    std::vector<int> out;
    for (const auto& d : c.devices) out.push_back(d.device);
    return out;
}

const AllocatorSettings* settings_of(const SnapshotContents& c) {
    return c.has_allocator_settings ? &c.allocator_settings : nullptr;
}

ProcessEvidence process_of(const SnapshotContents& a, const SnapshotContents& b, bool order_by_steps,
                           std::optional<int> device) {
    ProcessEvidence e;
    const auto overlap = share_trace_events(a, b);
    e.shared_events = overlap.shared;
    e.shared_sampled = overlap.sampled;
    e.overlap_apart = overlap.apart;
    // One moment twice (a file given twice, or a copy): the same trace, end to end, and the same
    // memory.
    e.same_trace = overlap.shared > 0 && a.trace_sample == b.trace_sample && a.trace_first_us == b.trace_first_us &&
                   a.trace_last_us == b.trace_last_us && a.trace_events_by_action == b.trace_events_by_action &&
                   a.totals.allocated_bytes == b.totals.allocated_bytes &&
                   a.totals.reserved_bytes == b.totals.reserved_bytes && a.totals.blocks == b.totals.blocks;
    // As in a diff: a capture of nothing holds no device to differ.
    const auto before = devices(a), after = devices(b);
    if (!device && !before.empty() && !after.empty() && before != after)
        e.devices_differ = Fact(FactKind::devices_differ)
                               .text("before", fmt::format("{}", fmt::join(before, ", ")))
                               .text("after", fmt::format("{}", fmt::join(after, ", ")));
    const auto ra = project_root_of(a.top_sites), rb = project_root_of(b.top_sites);
    if (other_checkout(ra, rb)) e.roots_differ = Fact(FactKind::roots_differ).text("before", ra).text("after", rb);
    if (a.main_script && b.main_script && *a.main_script != *b.main_script)
        e.main_scripts_differ =
            Fact(FactKind::main_scripts_differ).text("before", *a.main_script).text("after", *b.main_script);
    e.setting_differs = setting_differs(settings_of(a), settings_of(b));
    if (overlap.shared == 0 && a.trace_first_us && b.trace_first_us) {
        if (order_by_steps && *b.trace_last_us < *a.trace_first_us)
            e.order_reversed =
                Fact(FactKind::trace_order_reversed).count("gap_us", *a.trace_first_us - *b.trace_last_us);
        else if (overlap.apart == 0 && (*b.trace_first_us > *a.trace_last_us || *a.trace_first_us > *b.trace_last_us))
            e.traces_apart = Fact(FactKind::traces_apart).flag("full", false);
    }
    return e;
}

WorkloadEvidence workload_of(const SnapshotContents& a, const SnapshotContents& b) {
    WorkloadEvidence w;
    w.allocated_before = a.totals.allocated_bytes;
    w.allocated_after = b.totals.allocated_bytes;
    std::map<RelativeSite, SiteLevels> by_site;
    const auto add = [&](const SnapshotContents& c, bool after) {
        const auto root = project_root_of(c.top_sites);
        for (const auto& u : c.top_sites) {
            if (!u.has_stack) continue;
            auto& s = by_site[relative_site(u, root)];
            if (s.label.empty()) s.label = u.site.label();
            (after ? s.after : s.before) += u.bytes;
            (after ? w.stacked_after : w.stacked_before) += u.bytes;
        }
    };
    add(a, false);
    add(b, true);
    for (auto& [key, s] : by_site) w.sites.push_back(std::move(s));
    return w;
}

int strength(Answer a) { return a == Answer::no ? 0 : a == Answer::unknown ? 1 : 2; }

Facts named(const Facts& facts, const std::string& before, const std::string& after) {
    Facts out = facts;
    for (auto& f : out) f.text("between", fmt::format("{} and {}", before, after));
    return out;
}

}  // namespace

Comparability compare_contents(const SnapshotContents& before, const SnapshotContents& after, bool order_by_steps,
                               std::optional<int> device) {
    Comparability c;
    judge_process(process_of(before, after, order_by_steps, device), c);
    judge_workload(workload_of(before, after), c);
    return c;
}

Comparability weakest(const std::vector<Comparability>& pairs, const std::vector<std::string>& files) {
    Comparability out;
    out.same_process = Answer::yes;
    out.same_workload = Answer::yes;
    for (std::size_t i = 0; i < pairs.size(); ++i)
        if (!pairs[i].order_known && out.order_known) {  // the first pair whose order is contradicted
            out.order_known = false;
            out.order_evidence = named(pairs[i].order_evidence, files[i], files[i + 1]);
        }
    std::optional<std::size_t> process_at, workload_at;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        if (!process_at || strength(pairs[i].same_process) < strength(pairs[*process_at].same_process)) process_at = i;
        if (!workload_at || strength(pairs[i].same_workload) < strength(pairs[*workload_at].same_workload))
            workload_at = i;
    }
    if (process_at) {
        const auto i = *process_at;
        out.same_process = pairs[i].same_process;
        // Named by the pair it is about, unless every pair says yes.
        out.process_evidence = out.same_process == Answer::yes
                                   ? pairs[i].process_evidence
                                   : named(pairs[i].process_evidence, files[i], files[i + 1]);
    }
    if (workload_at) {
        const auto i = *workload_at;
        out.same_workload = pairs[i].same_workload;
        out.workload_evidence = out.same_workload == Answer::yes
                                    ? pairs[i].workload_evidence
                                    : named(pairs[i].workload_evidence, files[i], files[i + 1]);
    }
    return out;
}

}  // namespace memsnap::analysis::detail
