#include "explain_detail.hpp"

#include <memsnap/analysis/judge/advice.hpp>
#include <memsnap/util/format.hpp>

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
        if (judged[i].verdict == SiteVerdict::leak && grows_through_forward(s, index))
            by_blocks[s.change.delta_blocks].push_back(i);
    }
    const std::vector<std::size_t>* alike = nullptr;
    for (const auto& [blocks, sites] : by_blocks)
        if (sites.size() >= 3 && (alike == nullptr || sites.size() > alike->size())) alike = &sites;
    if (alike == nullptr) return std::nullopt;
    return *alike;
}

Diagnosis retained_graph(const std::vector<SiteGroups>& sites, std::vector<SiteJudgement>& judged,
                         const std::vector<std::size_t>& alike, const util::Steps& steps,
                         const std::optional<Convergence>& convergence) {
    auto d = from_pattern("retained_graph");
    std::int64_t bytes = 0, blocks = 0;
    for (std::size_t i : alike) {
        bytes += sites[i].change.delta_bytes;
        blocks += sites[i].change.delta_blocks;
    }
    d.evidence.push_back(fmt::format("{} forward-pass sites each gained {} blocks: {} blocks and {} in all",
                                     alike.size(), sites[alike.front()].change.delta_blocks, blocks,
                                     util::signed_bytes(bytes)));
    if (steps.known()) {
        const double span = static_cast<double>(steps.distance());
        d.evidence.push_back(fmt::format("{} blocks per step, {}, over these sites",
                                         util::count_rate(static_cast<double>(blocks) / span),
                                         util::rate(static_cast<double>(bytes) / span, true)));
    }
    if (convergence)
        d.evidence.push_back(fmt::format("the growth converges in {}:{} {} ({:.0f}% of it)",
                                         convergence->frame.filename, convergence->frame.line, convergence->frame.name,
                                         convergence->share * 100));
    for (std::size_t i : alike) judged[i].retained_graph = true;
    return d;
}

// The fastest-growing site of a verdict, summarised at the top.
Diagnosis leading(const std::vector<SiteGroups>& sites, const std::vector<SiteJudgement>& judged,
                  const SiteDiagnoser& diagnose, SiteVerdict wanted) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        if (judged[i].verdict != wanted) continue;
        if (!best || sites[i].change.growth_bytes_per_step > sites[*best].change.growth_bytes_per_step) best = i;
    }
    if (best) {
        const std::size_t i = *best;
        auto d = diagnose(sites[i], judged[i]);
        if (d.empty()) return {};
        const auto& s = sites[i].change;
        d.summary = judged[i].share ? fmt::format("leading site {} ({}% of the growth): {}", s.site.label(),
                                                  util::percent(*judged[i].share), d.summary)
                                    : fmt::format("leading site {} ({}): {}", s.site.label(),
                                                  util::signed_bytes(s.delta_bytes), d.summary);
        return d;
    }
    return {};
}

}  // namespace

Diagnosis overall_diagnosis(Verdict verdict, const std::vector<SiteGroups>& sites, std::vector<SiteJudgement>& judged,
                            const StackIndex& index, const SiteDiagnoser& diagnose, const util::Steps& steps,
                            const std::optional<Convergence>& convergence, const std::string& reason) {
    switch (verdict) {
        case Verdict::leak:
            if (const auto alike = retained_graph_sites(sites, judged, index))
                return retained_graph(sites, judged, *alike, steps, convergence);
            return leading(sites, judged, diagnose, SiteVerdict::leak);
        case Verdict::one_time_growth:
            return leading(sites, judged, diagnose, SiteVerdict::one_time);
        case Verdict::shape_growth:
            return leading(sites, judged, diagnose, SiteVerdict::shape_growth);
        case Verdict::growth: {
            auto d = from_pattern("different_workload");
            if (!reason.empty()) d.evidence.push_back(reason);
            return d;
        }
        case Verdict::fragmentation:
            return from_pattern("fragmentation");
        case Verdict::cache_growth:
            return from_pattern("cache_growth");
        case Verdict::stable:
            return {"", "no significant growth between the captures", "", {}};
        case Verdict::shrink:
            return {"", "memory shrank between the captures", "", {}};
    }
    return {};
}

std::vector<std::string> diff_notes(const ExplainInput& in, std::int64_t threshold, bool shares_known) {
    std::vector<std::string> notes;
    if (in.same_process.value != std::optional<bool>(true))
        notes.push_back(
            fmt::format("{}: they are compared as two workloads, sites matched by their frames (paths "
                        "without each capture's own prefix), not blocks by address; no site can be "
                        "called a leak",
                        in.same_process.value ? "the captures come from different processes"
                                              : "whether the captures come from one process cannot be told"));
    if (!in.steps.known())
        notes.push_back(in.steps.note.empty() ? "steps unknown: growth is given per capture (give --steps A,B)"
                                              : in.steps.note);
    if (!in.stacks_recorded) {
        notes.push_back(
            in.trace_stacks > 0
                ? fmt::format("the live blocks were allocated before recording started (the trace holds {} stacks): "
                              "blocks are grouped by size alone; start _record_memory_history() before the model "
                              "is built to see their sites",
                              in.trace_stacks)
                : "no allocation stacks were recorded: blocks are grouped by size alone (record with "
                  "torch.cuda.memory._record_memory_history() to see sites)");
    }
    if (in.focused) notes.push_back("--focus keeps only matching stacks: sites do not add up to the totals");
    if (in.pending_free_before != 0 || in.pending_free_after != 0)
        notes.push_back(fmt::format(
            "blocks pending free (freed, still in use on another stream) are counted apart: {} before, {} after",
            util::human_bytes(in.pending_free_before), util::human_bytes(in.pending_free_after)));
    if (!shares_known)
        notes.push_back(
            fmt::format("allocated memory changed by {}, not a growth beyond its noise floor of {}: no "
                        "share of the growth is given",
                        util::signed_bytes(in.totals.allocated.delta), util::human_bytes(threshold)));
    return notes;
}

}  // namespace memsnap::analysis::detail
