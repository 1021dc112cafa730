#include "explain_detail.hpp"

#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/judge/advice.hpp>
#include <memsnap/analysis/sites/growth_graph.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace memsnap::analysis {

namespace {

enum class Kind { freed, stable, shape, one_time, stays };

Kind kind_of(const SiteCounts& s, bool one_process) {
    if (s.delta_bytes < 0) return Kind::freed;
    if (s.delta_bytes == 0) return Kind::stable;
    if (s.delta_blocks <= 0) return Kind::shape;
    // Gradients, optimizer state, workspaces and autocast copies appear once, all at once: a
    // site that held none before and now holds some is that first appearance. Between two
    // processes nothing "appears": it is another workload.
    if (one_process && is_one_time(s.category) && s.before_blocks == 0) return Kind::one_time;
    return Kind::stays;
}

struct Weights {
    std::int64_t stays = 0, one_time = 0, shape = 0;
    std::size_t stays_sites = 0;
    std::int64_t stays_blocks = 0;
};

Weights weigh(const std::vector<SiteGroups>& sites, const std::vector<Kind>& kinds) {
    Weights w;
    for (std::size_t i = 0; i < sites.size(); ++i) {
        const auto& s = sites[i].change;
        if (kinds[i] == Kind::stays) {
            w.stays += s.delta_bytes;
            w.stays_blocks += s.delta_blocks;
            ++w.stays_sites;
        }
        if (kinds[i] == Kind::one_time) w.one_time += s.delta_bytes;
        if (kinds[i] == Kind::shape) w.shape += s.delta_bytes;
    }
    return w;
}

// The sites' part of the verdict, in words: only what is there.
std::vector<std::string> weight_evidence(const Weights& w, std::int64_t threshold, bool one_process) {
    std::vector<std::string> out;
    if (w.stays_sites > 0)
        out.push_back(fmt::format("{} site{} gained blocks that {}: {} blocks, {}, {} the noise floor of {}",
                                  w.stays_sites, w.stays_sites == 1 ? "" : "s",
                                  one_process ? "stay" : "are new in the second capture",
                                  util::signed_count(w.stays_blocks), util::signed_bytes(w.stays),
                                  w.stays > threshold ? "above" : "within", util::human_bytes(threshold)));
    if (w.one_time > 0)
        out.push_back(
            fmt::format("gradients, optimizer state, workspaces or autocast copies that were not there "
                        "before: {}",
                        util::signed_bytes(w.one_time)));
    if (w.shape > 0)
        out.push_back(
            fmt::format("sites with as many or fewer blocks holding more bytes: {}", util::signed_bytes(w.shape)));
    return out;
}

TotalsInput totals_input(const TotalsChange& t, const std::vector<SiteGroups>& sites) {
    auto exact = [](const TotalChange& c) {
        return MetricChange{ByteRange::exact(c.before), ByteRange::exact(c.delta)};
    };
    TotalsInput in;
    in.allocated = exact(t.allocated);
    in.reserved = exact(t.reserved);
    in.inactive_split = exact(t.inactive_split);
    std::int64_t before = 0, after = 0;
    for (const auto& s : sites) {
        before += s.change.before_blocks;
        after += s.change.after_blocks;
    }
    in.live_blocks = MetricChange{ByteRange::exact(before), ByteRange::exact(after - before)};
    return in;
}

Verdict decide(const TotalsReading& reading, const Weights& w, bool one_process, std::int64_t threshold) {
    if (one_process && w.stays > threshold) return Verdict::leak;
    if (reading.verdict != Verdict::leak) return reading.verdict;
    if (!one_process) return Verdict::growth;
    // Allocated grows beyond the floor: the largest explanation wins; a tie is never a leak.
    if (w.stays > w.one_time && w.stays > w.shape) return Verdict::leak;
    return w.one_time >= w.shape ? Verdict::one_time_growth : Verdict::shape_growth;
}

SiteVerdict site_verdict(Kind kind, Verdict overall) {
    switch (kind) {
        case Kind::freed:
            return SiteVerdict::freed;
        case Kind::stable:
            return SiteVerdict::stable;
        case Kind::shape:
            return SiteVerdict::shape_growth;
        case Kind::one_time:
            return SiteVerdict::one_time;
        case Kind::stays:
            return overall == Verdict::leak ? SiteVerdict::leak : SiteVerdict::growth;
    }
    return SiteVerdict::stable;
}

std::string growth_reason(const SameProcess& same, std::int64_t threshold) {
    if (same.value == std::optional<bool>(true))
        return fmt::format("below the noise floor of allocated memory ({}) with every such site together",
                           util::human_bytes(threshold));
    if (same.value == std::optional<bool>(false))
        return fmt::format("the captures come from different processes: {}",
                           same.evidence.empty() ? std::string("see same_process") : same.evidence.front());
    return "the captures cannot be shown to come from one process";
}

SiteFacts facts_of(const SiteGroups& s, SiteVerdict verdict, const StackIndex& index, const util::Steps& steps,
                   const SameProcess& same, std::int64_t threshold) {
    SiteFacts f;
    const auto& c = s.change;
    f.verdict = verdict;
    f.category = c.category;
    f.before_blocks = c.before_blocks;
    f.after_blocks = c.after_blocks;
    f.delta_blocks = c.delta_blocks;
    f.new_blocks = c.new_blocks;
    f.gone_blocks = c.gone_blocks;
    f.delta_bytes = c.delta_bytes;
    f.growth_bytes_per_step = c.growth_bytes_per_step;
    f.steps_known = steps.known();
    f.step_distance = steps.distance();
    f.one_process = same.value == std::optional<bool>(true);
    if (verdict == SiteVerdict::growth) f.growth_reason = growth_reason(same, threshold);
    // The diagnosis looks for names among these: a few dozen distinct frames are plenty.
    constexpr std::size_t kMaxUserFrames = 64;
    std::vector<CanonFrameId> seen;
    for (const auto& grown : grown_stacks(s))
        for (auto frame : index.frames(grown.stack)) {
            if (seen.size() == kMaxUserFrames) return f;
            if (!index.flags(frame).user || std::find(seen.begin(), seen.end(), frame) != seen.end()) continue;
            seen.push_back(frame);
            f.user_frames.push_back(index.frame(frame));
        }
    return f;
}

std::optional<Convergence> converge(const std::vector<SiteGroups>& sites, const StackIndex& index) {
    GrowthGraph graph;
    std::int64_t top_site = 0;
    std::vector<std::uint32_t> ids;
    // Convergence is near the outermost frames: deeper ones of a very deep stack add nothing.
    constexpr std::size_t kMaxDepth = 1024;
    for (std::size_t r = 0; r < sites.size(); ++r) {
        const auto& s = sites[r];
        top_site = std::max(top_site, s.change.delta_bytes);
        for (const auto& grown : grown_stacks(s)) {
            const auto frames = index.frames(grown.stack);
            const auto outer = frames.subspan(frames.size() > kMaxDepth ? frames.size() - kMaxDepth : 0);
            ids.clear();
            for (auto f : outer) ids.push_back(f.value);
            graph.add_stack(ids, grown.bytes, r);
        }
    }
    // Only worth saying when the growth is spread: no single site carries most of it.
    if (static_cast<double>(top_site) >= 0.8 * static_cast<double>(graph.total_growth())) return std::nullopt;
    const auto c = graph.convergence([&](std::uint32_t f) { return index.flags(CanonFrameId(f)).user; }, 0.8, 2);
    if (!c) return std::nullopt;
    return Convergence{index.frame(CanonFrameId(c->frame)), c->inclusive, c->exclusive,
                       static_cast<double>(c->inclusive) / static_cast<double>(graph.total_growth()), c->sites};
}

}  // namespace

Explanation explain(const ExplainInput& in) {
    Explanation out;
    const auto reading = read_totals(totals_input(in.totals, in.sites));
    const std::int64_t threshold = noise_threshold(ByteRange::exact(in.totals.allocated.before));
    const bool one_process = in.same_process.value == std::optional<bool>(true);
    std::vector<Kind> kinds;
    kinds.reserve(in.sites.size());
    for (const auto& s : in.sites) kinds.push_back(kind_of(s.change, one_process));
    const auto weights = weigh(in.sites, kinds);
    const Verdict verdict = decide(reading, weights, one_process, threshold);

    out.verdict.verdict = verdict;
    out.verdict.evidence = reading.evidence;
    for (auto& line : weight_evidence(weights, threshold, one_process)) out.verdict.evidence.push_back(std::move(line));
    const std::string reason = verdict == Verdict::growth ? growth_reason(in.same_process, threshold) : "";
    advice::Context context;
    context.from_snapshots = in.stacks_recorded;
    context.growth_reason = reason;
    out.verdict.advice = advice::for_verdict(verdict, context);

    // A share of the growth only when allocated memory grew beyond its noise floor.
    const bool shares_known = in.totals.allocated.delta > threshold;
    out.noise_threshold = threshold;
    out.sites.reserve(in.sites.size());
    for (std::size_t i = 0; i < in.sites.size(); ++i) {
        const auto& s = in.sites[i];
        SiteJudgement j;
        j.verdict = site_verdict(kinds[i], verdict);
        if (shares_known)
            j.share = static_cast<double>(s.change.delta_bytes) / static_cast<double>(in.totals.allocated.delta);
        out.sites.push_back(std::move(j));
    }
    out.convergence = converge(in.sites, in.index);
    const SiteDiagnoser diagnose(in.index, in.steps, in.same_process, threshold);
    out.overall =
        detail::overall_diagnosis(verdict, in.sites, out.sites, in.index, diagnose, in.steps, out.convergence, reason);
    out.notes = detail::diff_notes(in, threshold, shares_known);
    return out;
}

Diagnosis SiteDiagnoser::operator()(const SiteGroups& site, const SiteJudgement& judgement) const {
    auto d = diagnose_site(facts_of(site, judgement.verdict, index_, steps_, same_process_, noise_threshold_));
    if (!judgement.retained_graph) return d;
    auto member = from_pattern("retained_graph_site");
    member.evidence = std::move(d.evidence);
    return member;
}

}  // namespace memsnap::analysis
