#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/error.hpp>

#include <algorithm>
#include <array>

namespace memsnap::analysis {

namespace {

// The one table of verdicts: spelling, kind, meaning and when memsnap gives each. The man page
// prints the same table; a test keeps the two equal.
constexpr std::array<VerdictInfo, 15> kVerdicts = {{
    {Verdict::leak, "leak", true, "blocks that are new and stay, step after step",
     "Captures in a known order and comparable: one process shown by shared trace events, or one process not "
     "ruled out and the same sites at both captures (with that caveat). diff: sites with a stack whose new blocks "
     "stay, together past the noise floor of allocated memory. trend: steady growth over at least 4 points after "
     "warm-up, or over 3 points where every site that carries the growth agrees. trace: at least 3 whole "
     "iterations found from real steps, each keeping the same allocations.",
     ""},
    {Verdict::one_time_growth, "one_time_growth", true, "memory made once and then kept",
     "A known order and comparable captures. diff: sites that held nothing before and now hold gradients, "
     "optimizer state, workspaces or autocast weight copies. trend: four fifths of the growth in one interval.",
     "one_time"},
    {Verdict::shape_growth, "shape_growth", false,
     "as many live blocks as before, or fewer (at least half as many), holding more bytes",
     "Growth past the noise floor without more blocks (summaries: and no fewer than half as many).", ""},
    {Verdict::warmup, "warmup", true, "live since before the first iteration",
     "trace: iterations found from real steps, and every live allocation of the site made before the first.", ""},
    {Verdict::sawtooth, "sawtooth", true, "memory that grows and is freed again",
     "trend: a known order and comparable captures; frees that take back a quarter of the growth or more.", ""},
    {Verdict::fragmentation, "fragmentation", true, "reserved memory grows in partly used segments",
     "A known order and comparable captures; allocated within the noise floor, live blocks not grown, and the "
     "non-releasable part of the reserved growth larger than the releasable part (whole free segments, free "
     "pages of expandable segments) and past the noise floor.",
     ""},
    {Verdict::cache_growth, "cache_growth", false, "reserved memory grows as free cache",
     "Reserved grows past the noise floor while allocated does not, and most of the growth is releasable. "
     "Allocator advice only where behaviour is judged: between separate runs the cache differs by another "
     "high-water mark.",
     ""},
    {Verdict::shrink, "shrink", false, "less memory than before",
     "Allocated or reserved falls past the noise floor and neither grows past it (non-releasable cache may: the memory "
     "freed, still cached in segments that hold live blocks).",
     "shrinking"},
    {Verdict::stable, "stable", false, "no change past the noise floor",
     "Neither allocated nor reserved changes past the noise floor (non-releasable cache may, within what is reserved).",
     ""},
    {Verdict::irregular, "irregular", false, "growth that fits no shape",
     "trend: growth past the noise floor that is none of leak, one_time_growth, sawtooth or shape_growth.", ""},
    {Verdict::freed, "freed", false, "a site whose memory went down",
     "A site with fewer bytes than before, where behaviour is judged; between captures compared as levels it is "
     "shrink.",
     ""},
    {Verdict::current, "current", false, "made in the unfinished last iteration",
     "trace: live allocations made after the last iteration began, none by a complete one.", ""},
    {Verdict::live, "live", false, "live at the end", "trace: live at the end where no iterations were found.", ""},
    {Verdict::growth, "growth", false, "the levels differ; the behaviour is unknown",
     "Allocated (or a site) grows past the noise floor where a behaviour verdict's preconditions do not hold: "
     "another process, another workload, an unknown order, or no stack.",
     ""},
    {Verdict::differs, "differs", false, "the levels differ, with no direction",
     "trend: captures in no known order (a set, not a series) whose values lie further apart than the noise floor, "
     "so that neither growth nor shrink can be said; or, compared as levels, a first and last point within the "
     "noise floor of each other with points between past it. diff: two captures that contradict the order given "
     "(a trace clock or a counter runs backwards), whose levels would otherwise read as growth or shrink.",
     ""},
}};

constexpr std::array<std::string_view, 3> kChanges = {"grows", "flat", "falls"};

}  // namespace

std::span<const VerdictInfo> verdicts() { return kVerdicts; }
std::string_view to_string(Verdict verdict) { return kVerdicts[static_cast<std::size_t>(verdict)].spelling; }
bool is_behaviour(Verdict verdict) { return kVerdicts[static_cast<std::size_t>(verdict)].behaviour; }
std::string_view to_string(Change change) { return kChanges[static_cast<std::size_t>(change)]; }

std::optional<Verdict> parse_verdict(std::string_view spelling) {
    for (const auto& v : kVerdicts)
        if (v.spelling == spelling) return v.verdict;
    return std::nullopt;
}

std::int64_t noise_threshold(ByteRange larger) {
    constexpr std::int64_t one_mib = std::int64_t{1} << 20;
    return std::max(one_mib, std::max<std::int64_t>(larger.high, 0) / 200);
}

std::int64_t noise_threshold(std::int64_t before, std::int64_t after) {
    return noise_threshold(ByteRange::exact(std::max(before, after)));
}

ChangeCall judge_change(ByteRange larger, ByteRange delta) {
    ChangeCall call;
    call.threshold = noise_threshold(larger);
    if (delta.low > call.threshold) {
        call.change = Change::grows;
    } else if (delta.high < -call.threshold) {
        call.change = Change::falls;
    } else {
        call.change = Change::flat;
        call.uncertain = delta.high > call.threshold || delta.low < -call.threshold;
    }
    return call;
}

namespace {

// The larger end of before and after of a metric: its noise floor's base.
ByteRange larger_of(const MetricChange& m) {
    const ByteRange after = {m.before.low + m.delta.low, m.before.high + m.delta.high};
    return {std::max(m.before.low, after.low), std::max(m.before.high, after.high)};
}

std::optional<ChangeCall> judge(std::string_view metric, const std::optional<MetricChange>& m, Facts& evidence) {
    if (!m) {
        evidence.push_back(Fact(FactKind::metric_missing).text("metric", std::string(metric)));
        return std::nullopt;
    }
    const auto call = judge_change(larger_of(*m), m->delta);
    evidence.push_back(Fact(FactKind::metric_change)
                           .text("metric", std::string(metric))
                           .range("before", m->before, true)
                           .range("delta", m->delta, true)
                           .bytes("threshold", call.threshold)
                           .text("change", std::string(to_string(call.change)))
                           .flag("uncertain", call.uncertain));
    return call;
}

}  // namespace

TotalsReading read_totals(const TotalsInput& in) {
    if (!in.allocated && !in.reserved)
        throw input_error(
            "cannot compare: neither allocated nor reserved memory (allocated_bytes.all.current, "
            "reserved_bytes.all.current) is in both captures");
    TotalsReading r;
    r.allocated = judge("allocated_bytes", in.allocated, r.evidence);
    r.reserved = judge("reserved_bytes", in.reserved, r.evidence);
    if (in.non_releasable)
        r.non_releasable = judge("non_releasable_bytes", in.non_releasable, r.evidence);
    else if (in.reserved)
        r.evidence.push_back(Fact(FactKind::non_releasable_unknown));
    if (in.live_blocks) {
        r.live_blocks_grew = in.live_blocks->delta.low > 0;
        r.live_blocks_delta = in.live_blocks->delta;
        r.live_blocks_before = in.live_blocks->before;
        r.evidence.push_back(Fact(FactKind::live_blocks_change)
                                 .range("before", in.live_blocks->before, false)
                                 .range("delta", in.live_blocks->delta, false));
    }
    if (in.reserved && in.releasable && in.non_releasable && in.reserved->delta.low > 0)
        r.evidence.push_back(Fact(FactKind::reserved_split)
                                 .range("releasable", in.releasable->delta, true)
                                 .range("non_releasable", in.non_releasable->delta, true));
    if (in.ooms_delta && in.ooms_delta->low > 0) {
        r.new_ooms = true;
        r.evidence.push_back(Fact(FactKind::new_ooms).range("delta", *in.ooms_delta, false));
    }
    if (in.retries_delta && in.retries_delta->low > 0) {
        r.new_retries = true;
        r.evidence.push_back(Fact(FactKind::new_retries).range("delta", *in.retries_delta, false));
    }
    return r;
}

}  // namespace memsnap::analysis
