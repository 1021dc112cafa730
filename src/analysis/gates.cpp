#include <memsnap/analysis/gates.hpp>
#include <memsnap/stats/keys.hpp>
#include <memsnap/util/checked.hpp>

#include <algorithm>

namespace memsnap::analysis {

namespace {

Fact growth(std::string what, double rate, bool per_step, std::int64_t limit, std::string unit = {}) {
    return Fact(FactKind::gate_growth)
        .text("what", std::move(what))
        .real("rate", rate)
        .flag("per_step", per_step)
        .bytes("limit", limit)
        .text("unit", unit.empty() ? std::string(per_step ? "step" : "capture") : std::move(unit));
}

std::optional<GateTrip> leak_trip(Verdict verdict, Facts why) {
    if (verdict != Verdict::leak) return std::nullopt;
    return GateTrip{"--fail-on-leak", std::move(why)};
}

// A gate that could not be judged: said, not passed in silence.
GateTrip not_judged(std::string why, std::string option = "--fail-on-leak") {
    const bool growth = option == "--fail-on-growth";
    return GateTrip{
        std::move(option), {Fact(FactKind::gate_not_judged).text("why", std::move(why)).flag("growth", growth)}, false};
}

std::string why_not(const Comparability& c) {
    if (!c.order_known) return "order_unknown";
    if (c.same_process == Answer::no) return "other_process";
    if (c.same_workload == Answer::no) return "different_workload";
    return "unknown_process";
}

// A tripped gate names what grew: the total, and the sites over the limit, fastest first.
constexpr std::size_t kSitesNamed = 5;

std::optional<GateTrip> trip(Facts reasons) {
    if (reasons.empty()) return std::nullopt;
    return GateTrip{"--fail-on-growth", std::move(reasons)};
}

std::optional<GateTrip> growth_of(const SnapshotDiff& d, std::int64_t rate) {
    const bool per_step = d.steps.known();
    const auto limit = static_cast<double>(rate);
    Facts reasons;
    // A change within the noise floor is no growth, whatever rate it makes.
    const auto& a = d.totals.allocated;
    if (a.per_step > limit && a.delta > noise_threshold(a.before, a.after))
        reasons.push_back(growth("allocated memory", a.per_step, per_step, rate));
    // The listed sites are ranked by the size of their change; the fastest of all is kept apart.
    std::vector<const SiteChange*> over;
    if (d.fastest_site && d.fastest_site->growth_bytes_per_step > limit) over.push_back(&*d.fastest_site);
    for (const auto& s : d.sites)
        if (s.growth_bytes_per_step > limit && !(d.fastest_site && s.site == d.fastest_site->site)) over.push_back(&s);
    std::stable_sort(over.begin(), over.end(), [](const SiteChange* a, const SiteChange* b) {
        return a->growth_bytes_per_step > b->growth_bytes_per_step;
    });
    for (std::size_t i = 0; i < over.size() && i < kSitesNamed; ++i)
        reasons.push_back(growth(over[i]->site.label(), over[i]->growth_bytes_per_step, per_step, rate));
    return trip(std::move(reasons));
}

std::optional<GateTrip> growth_of(const StatsDiff& diff, std::int64_t rate) {
    Facts reasons;
    for (const auto& d : diff.devices) {
        const auto it = d.metrics.find(stats::keys::allocated_current);
        if (it == d.metrics.end()) continue;
        const auto& delta = it->second.delta;
        const auto& m = it->second;
        if (delta.low <=
            noise_threshold(ByteRange{std::max(m.before.low, m.after.low), std::max(m.before.high, m.after.high)}))
            continue;  // within the noise floor: no growth
        const bool per_step = diff.steps.known();
        const std::int64_t span =
            per_step ? diff.steps.distance() : static_cast<std::int64_t>(std::max<std::size_t>(d.series.size(), 2) - 1);
        const auto limit = util::checked_mul(rate, span);
        if (!limit || delta.low <= *limit) continue;  // overflow: beyond any delta
        auto f = growth("allocated memory (allocated_bytes.all.current)",
                        static_cast<double>(range_divide(delta, span).low), per_step, rate);
        if (d.device) f.count("device", *d.device);
        reasons.push_back(std::move(f));
    }
    if (reasons.empty()) return std::nullopt;
    return GateTrip{"--fail-on-growth", std::move(reasons)};
}

}  // namespace

std::optional<GateTrip> check_gates(const std::variant<SnapshotDiff, StatsDiff>& diff, const Gates& gates) {
    if (gates.growth_per_step)
        if (auto trip = std::visit([&](const auto& d) { return growth_of(d, *gates.growth_per_step); }, diff))
            return trip;
    if (!gates.leak) return std::nullopt;
    const auto& c = std::visit([](const auto& d) -> const Comparability& { return d.comparability; }, diff);
    if (!c.behaviour_allowed()) return not_judged(why_not(c));
    if (const auto* d = std::get_if<SnapshotDiff>(&diff)) return leak_trip(d->verdict, d->evidence);
    for (const auto& d : std::get<StatsDiff>(diff).devices)
        if (auto trip = leak_trip(d.verdict, d.evidence)) return trip;
    return std::nullopt;
}

namespace {

// With both gates, a growth gate that could not be judged is said beside the leak gate's
// result, not lost: the not-judged reasons are merged into one GateTrip.
std::optional<GateTrip> with_growth_unjudged(std::optional<GateTrip> leak, std::optional<GateTrip> growth) {
    if (!growth) return leak;
    if (!leak) return growth;
    if (leak->tripped) return leak;
    for (auto& r : growth->reasons) leak->reasons.push_back(std::move(r));
    return leak;
}

std::optional<GateTrip> leak_gate(const TrendResult& t) {
    if (!t.comparability.behaviour_allowed()) return not_judged(why_not(t.comparability));
    return leak_trip(t.verdict, t.evidence);
}

}  // namespace

std::optional<GateTrip> check_gates(const TrendResult& t, const Gates& gates) {
    // No slope is fitted to captures in no known order.
    std::optional<GateTrip> growth_unjudged;
    if (gates.growth_per_step && !t.comparability.order_known)
        growth_unjudged = not_judged("order_unknown", "--fail-on-growth");
    if (gates.growth_per_step && t.comparability.order_known) {
        const auto limit = static_cast<double>(*gates.growth_per_step);
        Facts reasons;
        // Allocated memory within its noise floor (a stable series) is no growth, whatever its slope.
        for (const auto& s : t.totals)
            if (s.name == "allocated_bytes" && s.fit.slope_bytes_per_step > limit && s.fit.verdict != Verdict::stable &&
                s.fit.verdict != Verdict::shrink)
                reasons.push_back(
                    growth("allocated memory", s.fit.slope_bytes_per_step, t.steps_known, *gates.growth_per_step));
        std::vector<const TrendSite*> over;
        for (const auto& s : t.sites)
            if (s.fit.slope_bytes_per_step > limit) over.push_back(&s);
        std::stable_sort(over.begin(), over.end(), [](const TrendSite* a, const TrendSite* b) {
            return a->fit.slope_bytes_per_step > b->fit.slope_bytes_per_step;
        });
        for (std::size_t i = 0; i < over.size() && i < kSitesNamed; ++i)
            reasons.push_back(growth(over[i]->site.label(), over[i]->fit.slope_bytes_per_step, t.steps_known,
                                     *gates.growth_per_step));
        if (auto tripped = trip(std::move(reasons))) return tripped;
    }
    if (!gates.leak) return growth_unjudged;
    return with_growth_unjudged(leak_gate(t), std::move(growth_unjudged));
}

std::optional<GateTrip> check_gates(const TraceResult& t, const Gates& gates) {
    // Per iteration: the most allocated in each iteration, from the first to the last.
    const auto& per = t.allocated_by_iteration;
    if (gates.growth_per_step && per.size() >= 2) {
        const double rate = static_cast<double>(per.back() - per.front()) / static_cast<double>(per.size() - 1);
        if (rate > static_cast<double>(*gates.growth_per_step))
            return GateTrip{"--fail-on-growth",
                            {growth("allocated memory", rate, false, *gates.growth_per_step, "iteration")}};
    }
    std::optional<GateTrip> growth_unjudged;  // no two iterations to take a rate from
    if (gates.growth_per_step && per.size() < 2) growth_unjudged = not_judged("too_few_iterations", "--fail-on-growth");
    if (!gates.leak) return growth_unjudged;
    if (!t.iterations_judged) return with_growth_unjudged(not_judged("too_few_iterations"), std::move(growth_unjudged));
    for (const auto& s : t.sites)
        if (s.verdict == Verdict::leak)
            return GateTrip{"--fail-on-leak",
                            {Fact(FactKind::oom_leak_site)
                                 .text("site", s.site.label())
                                 .count("allocations", s.leak_allocations_per_iteration)
                                 .bytes("bytes", s.leak_bytes_per_iteration)
                                 .bytes("held", s.live_bytes)
                                 .count("held_allocations", s.live_allocations)}};
    return std::nullopt;
}

}  // namespace memsnap::analysis
