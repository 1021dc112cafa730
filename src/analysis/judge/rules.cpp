#include <memsnap/analysis/judge/rules.hpp>

#include <algorithm>

namespace memsnap::analysis {

SiteShape shape_of(std::int64_t delta_bytes, std::int64_t delta_blocks, std::int64_t before_blocks, Category category) {
    if (delta_bytes < 0) return SiteShape::freed;
    if (delta_bytes == 0) return SiteShape::stable;
    if (delta_blocks <= 0) return SiteShape::more_bytes;
    if (is_one_time(category) && before_blocks == 0) return SiteShape::first_appearance;
    return SiteShape::stays;
}

void SiteWeights::add(SiteShape shape, std::int64_t delta_bytes, std::int64_t delta_blocks, bool has_stack) {
    if (delta_bytes <= 0) return;
    if (!has_stack) {
        unplaced += delta_bytes;
        return;
    }
    switch (shape) {
        case SiteShape::stays:
            stays += delta_bytes;
            stays_blocks += delta_blocks;
            ++stays_sites;
            break;
        case SiteShape::first_appearance:
            first_appearance += delta_bytes;
            break;
        case SiteShape::more_bytes:
            more_bytes += delta_bytes;
            break;
        default:
            break;
    }
}

Fact growth_reason(const Comparability& c, bool placed) {
    return Fact(FactKind::growth_reason).text("reason", growth_reason_word(c, placed));
}

const char* growth_reason_word(const Comparability& c, bool placed) {
    return !c.order_known                                                            ? "order_unknown"
           : c.same_process == Answer::no                                            ? "other_process"
           : c.same_workload == Answer::no                                           ? "different_workload"
           : c.same_process == Answer::unknown && c.same_workload == Answer::unknown ? "unknown_process"
           : !placed                                                                 ? "no_stack"
                                                                                     : "below_noise";
}

namespace {

bool is(const std::optional<ChangeCall>& c, Change change) { return c && c->change == change; }

Facts weight_facts(const SiteWeights& w, std::int64_t threshold, bool one_process) {
    Facts out;
    if (w.stays_sites > 0)
        out.push_back(Fact(FactKind::sites_stay)
                          .count("sites", static_cast<std::int64_t>(w.stays_sites))
                          .count("blocks", w.stays_blocks)
                          .bytes("bytes", w.stays)
                          .bytes("threshold", threshold)
                          .flag("above", w.stays > threshold)
                          .flag("one_process", one_process));
    if (w.first_appearance > 0) out.push_back(Fact(FactKind::sites_first_appear).bytes("bytes", w.first_appearance));
    if (w.more_bytes > 0) out.push_back(Fact(FactKind::sites_shape).bytes("bytes", w.more_bytes));
    return out;
}

// New blocks that stay, past the floor, and more than shape growth explains (a longer
// sequence also makes blocks of new sizes). A first step's growth beside them does not hide
// them: both hold, and the leak is what needs doing.
bool leak_holds(const PairReading& r, const SiteWeights& w) {
    return w.stays > r.allocated_threshold && w.stays > w.more_bytes;
}

// Allocated grows past the floor.
Verdict growth_verdict(const PairReading& r, const SiteWeights& w, bool behaviour) {
    const bool placed = w.stays + w.first_appearance + w.more_bytes > w.unplaced;
    if (!behaviour || !placed)
        return w.more_bytes > w.stays + w.first_appearance + w.unplaced ? Verdict::shape_growth : Verdict::growth;
    if (leak_holds(r, w)) return Verdict::leak;
    if (w.first_appearance == 0 && w.more_bytes == 0) return Verdict::growth;  // new blocks, but within the floor
    return w.first_appearance >= w.more_bytes ? Verdict::one_time_growth : Verdict::shape_growth;
}

// Reserved grows while allocated does not.
Verdict reserved_verdict(const PairReading& r, bool behaviour) {
    const auto& t = *r.totals;
    if (!r.releasable_delta || !r.non_releasable_delta) {
        // Summaries: non-releasable growth is fragmentation only in one comparable workload.
        if (is(t.non_releasable, Change::grows))
            return behaviour && !is(t.allocated, Change::falls) ? Verdict::fragmentation : Verdict::growth;
        return Verdict::cache_growth;
    }
    const std::int64_t releasable = *r.releasable_delta, stuck = *r.non_releasable_delta;
    if (stuck > releasable) {
        const bool fragmentation =
            behaviour && is(t.allocated, Change::flat) && !t.live_blocks_grew && stuck > r.reserved_threshold;
        return fragmentation ? Verdict::fragmentation : Verdict::growth;
    }
    return Verdict::cache_growth;
}

// A level that says which way it moved: in no known order (the captures contradict the order
// given) it has no direction, and the captures are a set whose levels differ, as in a trend.
Verdict without_direction(Verdict v, const Comparability& c) {
    if (c.order_known) return v;
    switch (v) {
        case Verdict::growth:
        case Verdict::shape_growth:
        case Verdict::cache_growth:
        case Verdict::shrink:
            return Verdict::differs;
        default:
            return v;
    }
}

}  // namespace

PairVerdict judge_pair(const PairReading& r) {
    PairVerdict out;
    const auto& t = *r.totals;
    const auto& c = *r.comparability;
    const bool behaviour = c.behaviour_allowed();
    const SiteWeights w = r.weights.value_or(SiteWeights{});
    // How the sites' growth weighs: evidence for a behaviour verdict only (between separate runs,
    // "blocks that are new" is a leak's shape without a leak's grounds).
    if (r.weights && behaviour) out.evidence = weight_facts(w, r.allocated_threshold, c.one_process());
    if (is(t.allocated, Change::grows)) {
        // Summaries: as many live allocations as before, or fewer, holding more bytes. Fewer than
        // half as many are not the same allocations grown: other ones, in other sizes.
        const bool same_count = t.live_blocks_delta && t.live_blocks_before && t.live_blocks_delta->high <= 0 &&
                                util::Wide{t.live_blocks_delta->low} * 2 >= -util::Wide{t.live_blocks_before->low};
        out.verdict = r.weights    ? growth_verdict(r, w, behaviour)
                      : same_count ? Verdict::shape_growth
                      : behaviour  ? Verdict::leak
                                   : Verdict::growth;
    } else if (behaviour && r.weights && leak_holds(r, w)) {
        out.verdict = Verdict::leak;  // new blocks that stay, hidden in the totals by frees elsewhere
    } else if (is(t.reserved, Change::grows) && !t.allocated) {
        out.verdict = Verdict::growth;  // cache or live tensors: without allocated, no telling
        out.evidence.push_back(Fact(FactKind::growth_reason).text("reason", "allocated_unknown"));
        return out;
    } else if (is(t.reserved, Change::grows)) {
        out.verdict = reserved_verdict(r, behaviour);  // allocated flat or falling: the cache grew
    } else if (is(t.allocated, Change::falls) || is(t.reserved, Change::falls)) {
        // Non-releasable cache that grows as live memory falls is the freed memory, still cached
        // in segments that hold live blocks (the evidence says so): nothing more is held.
        out.verdict = Verdict::shrink;
    } else {
        out.verdict = Verdict::stable;
    }
    // Why behaviour is not judged: for growth, and for shape growth compared as levels.
    if (out.verdict == Verdict::growth || (out.verdict == Verdict::shape_growth && !behaviour)) {
        const bool placed = !r.weights || w.stays + w.first_appearance + w.more_bytes > w.unplaced;
        out.evidence.push_back(growth_reason(c, placed));
    }
    out.verdict = without_direction(out.verdict, c);
    return out;
}

bool part_of_leak(std::int64_t delta_bytes, const SiteWeights& w, std::int64_t threshold) {
    return delta_bytes > threshold || delta_bytes * 50 >= w.stays;
}

namespace {

Verdict judge_site_in_order(SiteShape shape, bool has_stack, Verdict overall, const Comparability& c,
                            bool carries_leak) {
    switch (shape) {
        case SiteShape::freed:  // "freed" only where one process is shown; else its level fell
            return c.behaviour_allowed() ? Verdict::freed : Verdict::shrink;
        case SiteShape::stable:
            return Verdict::stable;
        case SiteShape::more_bytes:
            return Verdict::shape_growth;
        default:
            break;
    }
    if (!has_stack || !c.behaviour_allowed()) return Verdict::growth;
    if (shape == SiteShape::first_appearance) return Verdict::one_time_growth;
    return overall == Verdict::leak && carries_leak ? Verdict::leak : Verdict::growth;
}

}  // namespace

Verdict judge_site(SiteShape shape, bool has_stack, Verdict overall, const Comparability& c, bool carries_leak) {
    return without_direction(judge_site_in_order(shape, has_stack, overall, c, carries_leak), c);
}

Verdict judge_series(const SeriesShape& s, bool behaviour_allowed, bool ordered) {
    if (!ordered) return s.spread <= s.noise ? Verdict::stable : Verdict::differs;
    if (s.ups == 0 && s.downs == 0) return Verdict::stable;
    if (!behaviour_allowed) {
        if (s.net > s.noise) return s.blocks_constant ? Verdict::shape_growth : Verdict::growth;
        if (s.net < -s.noise) return Verdict::shrink;
        // Back where it began, past the floor between: not stable, and (levels only) no sawtooth.
        return s.spread > s.noise ? Verdict::differs : Verdict::stable;
    }
    if (s.ups == 0) return Verdict::shrink;
    // Frees that take back a quarter of the growth or more: memory that comes and goes.
    if (s.downs > 0 && s.down_sum * 4 >= s.up_sum) return Verdict::sawtooth;
    if (s.blocks_constant) return Verdict::shape_growth;
    // 80% in one interval (exact: five times an exabyte interval passes 2^63).
    if (s.ups == 1 || util::Wide{s.max_up} * 5 >= s.up_sum * 4) return Verdict::one_time_growth;
    const std::size_t intervals = s.points > 0 ? s.points - 1 : 0;
    const std::size_t steady = std::max<std::size_t>(2, (intervals * 3 + 4) / 5);  // 60% of the intervals
    if (s.ups >= steady && s.r2 >= 0.8) return Verdict::leak;
    return Verdict::irregular;
}

}  // namespace memsnap::analysis
