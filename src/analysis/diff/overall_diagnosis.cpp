#include "explain_detail.hpp"

#include <fmt/format.h>

#include <map>

namespace memsnap::analysis::detail {

namespace {

bool grows_through_forward(const SiteGroups& s, const StackIndex& index) {
    for (const auto& grown : grown_stacks(s))
        for (auto f : index.frames(grown.stack))
            if (index.is_forward(f)) return true;
    return false;
}

// Leak sites in a forward pass, grouped by how many blocks each gained: many sites gaining
// alike is one graph kept per step.
std::optional<std::vector<std::size_t>> retained_graph_sites(const std::vector<SiteGroups>& sites,
                                                             const std::vector<SiteJudgement>& judged,
                                                             const StackIndex& index) {
    std::map<std::int64_t, std::vector<std::size_t>> by_blocks;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        const auto& s = sites[i];
        if (judged[i].verdict == Verdict::leak && grows_through_forward(s, index))
            by_blocks[s.change.delta_blocks].push_back(i);
    }
    const std::vector<std::size_t>* alike = nullptr;
    for (const auto& [blocks, members] : by_blocks)
        if (members.size() >= 3 && (alike == nullptr || members.size() > alike->size())) alike = &members;
    if (alike == nullptr) return std::nullopt;
    return *alike;
}

Diagnosis retained_graph(const std::vector<SiteGroups>& sites, std::vector<SiteJudgement>& judged,
                         const std::vector<std::size_t>& alike, const util::Steps& steps,
                         const std::optional<Convergence>& convergence) {
    Diagnosis d;
    d.pattern = Pattern::retained_graph;
    std::int64_t bytes = 0, blocks = 0;
    for (std::size_t i : alike) {
        bytes += sites[i].change.delta_bytes;
        blocks += sites[i].change.delta_blocks;
    }
    d.evidence.push_back(Fact(FactKind::forward_sites_alike)
                             .count("sites", static_cast<std::int64_t>(alike.size()))
                             .count("blocks_each", sites[alike.front()].change.delta_blocks)
                             .count("blocks", blocks)
                             .bytes("bytes", bytes));
    if (steps.known()) {
        const double span = static_cast<double>(steps.distance());
        d.evidence.push_back(Fact(FactKind::forward_sites_rate)
                                 .real("blocks", static_cast<double>(blocks) / span)
                                 .real("bytes", static_cast<double>(bytes) / span)
                                 .flag("per_step", true));
    }
    if (convergence)
        d.evidence.push_back(Fact(FactKind::converges_in)
                                 .text("frame", fmt::format("{}:{} {}", convergence->frame.filename,
                                                            convergence->frame.line, convergence->frame.name))
                                 .real("share", convergence->share));
    for (std::size_t i : alike) judged[i].retained_graph = true;
    return d;
}

// The fastest-growing site of a verdict, summarised at the top.
Diagnosis leading(const std::vector<SiteGroups>& sites, const std::vector<SiteJudgement>& judged,
                  const SiteDiagnoser& diagnose, Verdict wanted) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        if (judged[i].verdict != wanted || !sites[i].change.has_stack) continue;
        if (!best || sites[i].change.growth_bytes_per_step > sites[*best].change.growth_bytes_per_step) best = i;
    }
    if (!best) return {};
    auto d = diagnose(sites[*best], judged[*best]);
    if (d.empty()) return {};
    d.site = sites[*best].change.site;
    d.share = judged[*best].share;
    return d;
}

}  // namespace

Diagnosis overall_diagnosis(Verdict verdict, const ExplainInput& in, std::vector<SiteJudgement>& judged,
                            const SiteDiagnoser& diagnose, const std::optional<Convergence>& convergence) {
    const bool allowed = in.comparability.behaviour_allowed();
    switch (verdict) {
        case Verdict::leak:
            if (const auto alike = retained_graph_sites(in.sites, judged, in.index))
                return retained_graph(in.sites, judged, *alike, in.steps, convergence);
            return leading(in.sites, judged, diagnose, Verdict::leak);
        case Verdict::one_time_growth:
            return leading(in.sites, judged, diagnose, Verdict::one_time_growth);
        case Verdict::shape_growth:
            return leading(in.sites, judged, diagnose, Verdict::shape_growth);
        case Verdict::fragmentation:
            return {Pattern::fragmentation, {}, std::nullopt, std::nullopt};
        case Verdict::cache_growth:
            // The cache pattern (and its allocator advice) only where one run is judged: between
            // separate runs the cache differs by another high-water mark.
            if (!allowed) return {};
            return {Pattern::cache_growth, {}, std::nullopt, std::nullopt};
        default:
            return {};
    }
}

Facts diff_notes(const ExplainInput& in, std::int64_t threshold, bool shares_known) {
    Facts notes;
    const auto& c = in.comparability;
    if (!c.behaviour_allowed())
        notes.push_back(Fact(FactKind::not_comparable)
                            .text("same_process", std::string(to_string(c.same_process)))
                            .text("same_workload", std::string(to_string(c.same_workload))));
    if (c.caveat()) notes.push_back(Fact(FactKind::caveat_same_workload));
    if (!in.steps.known())
        notes.push_back(Fact(FactKind::steps_unknown)
                            .text("source", in.steps.note.empty() ? std::string("no --steps, "
                                                                                "no step "
                                                                                "words")
                                                                  : in.steps.note));
    if (!in.stacks_recorded) {
        if (in.trace_stacks > 0)
            notes.push_back(Fact(FactKind::stacks_before_recording).count("trace_stacks", in.trace_stacks));
        else
            notes.push_back(Fact(FactKind::no_stacks_recorded));
    }
    if (in.focused) notes.push_back(Fact(FactKind::focus_filter));
    if (in.pending_free_before != 0 || in.pending_free_after != 0)
        notes.push_back(
            Fact(FactKind::pending_free).bytes("before", in.pending_free_before).bytes("after", in.pending_free_after));
    // Said where the floor is why (between separate runs the levels note says enough).
    if (!shares_known && in.comparability.behaviour_allowed())
        notes.push_back(
            Fact(FactKind::shares_unknown).bytes("delta", in.totals.allocated.delta).bytes("threshold", threshold));
    return notes;
}

}  // namespace memsnap::analysis::detail
