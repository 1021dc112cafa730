#include "explain_detail.hpp"

#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/sites/growth_graph.hpp>

#include <algorithm>

namespace memsnap::analysis {

namespace {

TotalsInput totals_input(const TotalsChange& t, std::int64_t live_before, std::int64_t live_after) {
    auto exact = [](const TotalChange& c) {
        return MetricChange{ByteRange::exact(c.before), ByteRange::exact(c.delta)};
    };
    TotalsInput in;
    in.allocated = exact(t.allocated);
    in.reserved = exact(t.reserved);
    in.non_releasable = exact(t.non_releasable);
    in.releasable = exact(t.releasable);
    in.live_blocks = MetricChange{ByteRange::exact(live_before), ByteRange::exact(live_after - live_before)};
    return in;
}

// The pair's verdict on one set of totals (all devices, or one) and its sites' changes there.
struct PairJudgement {
    PairVerdict verdict;
    TotalsReading reading;
    SiteWeights weights;
    std::int64_t threshold = 0;
};

struct SiteChangeOn {
    SiteShape shape = SiteShape::stable;
    std::int64_t delta_bytes = 0, delta_blocks = 0;
    bool has_stack = true;
};

PairJudgement judge_on(const TotalsChange& totals, const std::vector<SiteChangeOn>& sites, std::int64_t live_before,
                       std::int64_t live_after, const Comparability& comparability) {
    PairJudgement out;
    out.reading = read_totals(totals_input(totals, live_before, live_after));
    for (const auto& s : sites) out.weights.add(s.shape, s.delta_bytes, s.delta_blocks, s.has_stack);
    out.threshold = noise_threshold(totals.allocated.before, totals.allocated.after);
    PairReading pair;
    pair.totals = &out.reading;
    pair.allocated_threshold = out.threshold;
    pair.reserved_threshold = noise_threshold(totals.reserved.before, totals.reserved.after);
    pair.releasable_delta = totals.releasable.delta;
    pair.non_releasable_delta = totals.non_releasable.delta;
    pair.weights = out.weights;
    pair.comparability = &comparability;
    out.verdict = judge_pair(pair);
    return out;
}

// How much a verdict asks of the reader: the pair of several devices takes the most severe.
int severity(Verdict v) {
    switch (v) {
        case Verdict::leak:
            return 8;
        case Verdict::fragmentation:
            return 7;
        case Verdict::one_time_growth:
            return 6;
        case Verdict::shape_growth:
            return 5;
        case Verdict::growth:
            return 4;
        case Verdict::cache_growth:
            return 3;
        case Verdict::shrink:
            return 2;
        default:
            return 1;
    }
}

// Each device judged on its own; `device_leaks[i]` says whether site i stays on a device whose
// verdict is leak.
struct DevicesJudgement {
    std::size_t chosen = 0;  // the most severe device's position
    std::vector<PairJudgement> devices;
    std::vector<bool> site_leaks;
};

DevicesJudgement judge_devices(const ExplainInput& in) {
    DevicesJudgement out;
    out.site_leaks.assign(in.sites.size(), false);
    std::vector<std::vector<std::size_t>> stays(in.devices.size());
    for (std::size_t d = 0; d < in.devices.size(); ++d) {
        const int device = in.devices[d].device;
        std::vector<SiteChangeOn> changes;
        std::int64_t live_before = 0, live_after = 0;
        for (std::size_t i = 0; i < in.sites.size(); ++i) {
            const auto& s = in.sites[i];
            for (const auto& c : s.by_device) {
                if (c.device != device) continue;
                const auto delta_blocks = c.after_blocks - c.before_blocks;
                const auto delta_bytes = c.after_bytes - c.before_bytes;
                const auto shape = shape_of(delta_bytes, delta_blocks, c.before_blocks, s.change.category);
                changes.push_back({shape, delta_bytes, delta_blocks, s.change.has_stack});
                if (shape == SiteShape::stays) stays[d].push_back(i);
                live_before += c.before_blocks;
                live_after += c.after_blocks;
            }
        }
        out.devices.push_back(judge_on(in.devices[d].totals, changes, live_before, live_after, in.comparability));
        if (severity(out.devices[d].verdict.verdict) > severity(out.devices[out.chosen].verdict.verdict))
            out.chosen = d;
    }
    for (std::size_t d = 0; d < in.devices.size(); ++d)
        if (out.devices[d].verdict.verdict == Verdict::leak)
            for (const auto i : stays[d]) out.site_leaks[i] = true;
    return out;
}

}  // namespace

namespace {

SiteFacts facts_of(const SiteGroups& s, Verdict verdict, const StackIndex& index, const util::Steps& steps) {
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

// Why a site with a stack whose blocks grew gets growth, not a behaviour verdict.
const char* site_growth_reason(const Comparability& c, Verdict over, bool part, const SiteWeights& w) {
    if (!c.behaviour_allowed()) return growth_reason_word(c, true);
    return over == Verdict::leak && !part ? "small_part" : w.more_bytes >= w.stays ? "shape_dominates" : "below_noise";
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
    std::vector<SiteChangeOn> changes;
    changes.reserve(in.sites.size());
    std::int64_t live_before = 0, live_after = 0;
    out.sites.reserve(in.sites.size());
    for (const auto& s : in.sites) {
        const auto& c = s.change;
        SiteJudgement j;
        j.shape = shape_of(c.delta_bytes, c.delta_blocks, c.before_blocks, c.category);
        changes.push_back({j.shape, c.delta_bytes, c.delta_blocks, c.has_stack});
        live_before += c.before_blocks;
        live_after += c.after_blocks;
        out.sites.push_back(j);
    }
    const auto whole = judge_on(in.totals, changes, live_before, live_after, in.comparability);
    const SiteWeights& weights = whole.weights;
    const std::int64_t threshold = whole.threshold;
    std::optional<DevicesJudgement> by_device;
    if (in.devices.size() > 1) by_device = judge_devices(in);
    const auto& judged = by_device ? by_device->devices[by_device->chosen] : whole;
    out.verdict = judged.verdict.verdict;
    if (by_device)
        for (std::size_t d = 0; d < in.devices.size(); ++d) {
            const auto& j = by_device->devices[d];
            const auto& t = in.devices[d].totals;
            out.evidence.push_back(Fact(FactKind::device_verdict)
                                       .count("device", in.devices[d].device)
                                       .text("verdict", std::string(to_string(j.verdict.verdict)))
                                       .bytes("allocated_before", t.allocated.before)
                                       .bytes("allocated_delta", t.allocated.delta)
                                       .bytes("threshold", j.threshold));
        }
    // Under several devices the figures read are the chosen device's, and are named so (its
    // totals are not the capture's).
    for (auto f : judged.reading.evidence) {
        if (by_device && (f.kind == FactKind::metric_change || f.kind == FactKind::live_blocks_change))
            f.count("device", in.devices[by_device->chosen].device);
        out.evidence.push_back(std::move(f));
    }
    for (const auto& f : judged.verdict.evidence) out.evidence.push_back(f);
    AdviceContext context;
    context.from_snapshots = in.stacks_recorded;
    context.snapshot_inputs = true;  // a snapshot diff, stacks or not: its advice never speaks of summaries
    context.caveat = in.comparability.caveat();
    context.order_known = in.comparability.order_known;
    context.behaviour = in.comparability.behaviour_allowed();
    context.order_contradicted = in.comparability.order_contradicted();
    context.one_process_ruled_out = in.comparability.same_process == Answer::no;
    context.read_live_change(judged.reading);
    out.advice = advice_for(out.verdict, context);

    // A share of the growth only when allocated memory grew beyond its noise floor.
    // Between captures compared as levels, a difference is no growth to take a share of.
    const bool shares_known = in.totals.allocated.delta > threshold && in.comparability.behaviour_allowed();
    out.noise_threshold = threshold;
    for (std::size_t i = 0; i < in.sites.size(); ++i) {
        auto& j = out.sites[i];
        const auto& c = in.sites[i].change;
        // Under several devices, a site leaks where it stays on a device that leaks.
        const Verdict over = !by_device || by_device->site_leaks[i] ? out.verdict
                             : out.verdict == Verdict::leak         ? Verdict::growth
                                                                    : out.verdict;
        const bool part = part_of_leak(c.delta_bytes, weights, threshold);
        j.verdict = judge_site(j.shape, c.has_stack, over, in.comparability, part);
        if (j.verdict == Verdict::growth && c.has_stack)
            j.reason = site_growth_reason(in.comparability, over, part, weights);
        if (shares_known) j.share = static_cast<double>(c.delta_bytes) / static_cast<double>(in.totals.allocated.delta);
    }
    // Where growth converges is said only under a verdict of growth, of growth past the noise floor.
    const bool grows = out.verdict == Verdict::leak || out.verdict == Verdict::one_time_growth ||
                       out.verdict == Verdict::shape_growth || out.verdict == Verdict::growth;
    if (grows && weights.stays + weights.first_appearance + weights.more_bytes > threshold)
        out.convergence = converge(in.sites, in.index);
    const SiteDiagnoser diagnose(in.index, in.steps, in.comparability);
    out.overall = detail::overall_diagnosis(out.verdict, in, out.sites, diagnose, out.convergence);
    out.notes = detail::diff_notes(in, threshold, shares_known);
    return out;
}

Diagnosis SiteDiagnoser::operator()(const SiteGroups& site, const SiteJudgement& judgement) const {
    // A cause is named only for a site with a stack, where the verdict's preconditions hold.
    if (!site.change.has_stack || !comparability_.behaviour_allowed()) return {};
    auto d = diagnose_site(facts_of(site, judgement.verdict, index_, steps_));
    if (!judgement.retained_graph || d.empty()) return d;
    d.pattern = Pattern::retained_graph_site;
    return d;
}

}  // namespace memsnap::analysis
