#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::analysis {

namespace {

// Names by enumerator, in declaration order: what JSON and the man page say.
constexpr std::string_view kVerdicts[] = {"leak",          "one_time_growth", "shape_growth", "growth",
                                          "fragmentation", "cache_growth",    "stable",       "shrink"};
constexpr std::string_view kSiteVerdicts[] = {"leak", "one_time", "shape_growth", "growth", "freed", "stable"};
constexpr std::string_view kChanges[] = {"grows", "flat", "falls"};

}  // namespace

std::string_view to_string(Verdict verdict) { return kVerdicts[static_cast<std::size_t>(verdict)]; }
std::string_view to_string(SiteVerdict verdict) { return kSiteVerdicts[static_cast<std::size_t>(verdict)]; }
std::string_view to_string(Change change) { return kChanges[static_cast<std::size_t>(change)]; }

std::int64_t noise_threshold(ByteRange before) {
    constexpr std::int64_t one_mib = std::int64_t{1} << 20;
    return std::max(one_mib, std::max<std::int64_t>(before.high, 0) / 200);
}

ChangeCall judge_change(ByteRange before, ByteRange delta) {
    ChangeCall call;
    call.threshold = noise_threshold(before);
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

std::string describe(std::string_view name, const MetricChange& m, const ChangeCall& call) {
    std::string text =
        fmt::format("{}: {} → change {} ({}; noise threshold {})", name, util::format_range(m.before, true),
                    util::format_delta(m.delta, true), to_string(call.change), util::human_bytes(call.threshold));
    if (call.uncertain)
        text += "; uncertain: the table's rounding allows a change beyond the threshold, counted as flat";
    return text;
}

std::optional<ChangeCall> judge(std::string_view name, const std::optional<MetricChange>& m,
                                std::vector<std::string>& evidence) {
    if (!m) {
        evidence.push_back(fmt::format("{}: not in both captures", name));
        return std::nullopt;
    }
    const auto call = judge_change(m->before, m->delta);
    evidence.push_back(describe(name, *m, call));
    return call;
}

Verdict totals_verdict(const TotalsReading& r) {
    const auto is = [](const std::optional<ChangeCall>& c, Change change) { return c && c->change == change; };
    if (is(r.allocated, Change::grows)) return Verdict::leak;
    // Without allocated memory, reserved growth cannot be told from a leak.
    if (!r.allocated && is(r.reserved, Change::grows)) return Verdict::growth;
    if (is(r.reserved, Change::grows)) {
        // Reserved grows while live memory does not: held split segments or a growing cache.
        // Unknown non-releasable memory cannot tell the two apart; cache growth is the milder
        // claim and the evidence says what is missing.
        return is(r.inactive_split, Change::grows) ? Verdict::fragmentation : Verdict::cache_growth;
    }
    if (is(r.allocated, Change::falls) || is(r.reserved, Change::falls)) return Verdict::shrink;
    return Verdict::stable;
}

}  // namespace

TotalsReading read_totals(const TotalsInput& in) {
    if (!in.allocated && !in.reserved)
        throw input_error(
            "cannot compare: neither allocated nor reserved memory (allocated_bytes.all.current, "
            "reserved_bytes.all.current) is in both captures");
    TotalsReading r;
    r.allocated = judge("allocated (allocated_bytes.all.current)", in.allocated, r.evidence);
    r.reserved = judge("reserved (reserved_bytes.all.current)", in.reserved, r.evidence);
    if (in.inactive_split) {
        r.inactive_split = judge("non-releasable (inactive_split_bytes.all.current)", in.inactive_split, r.evidence);
    } else if (in.reserved) {
        r.evidence.push_back(
            "non-releasable memory (inactive_split_bytes.all.current) unknown: fragmentation cannot be told "
            "from cache growth");
    }
    if (in.live_blocks)
        r.evidence.push_back(fmt::format("live allocations (allocation.all.current): {} → change {}",
                                         util::format_range(in.live_blocks->before, false),
                                         util::format_delta(in.live_blocks->delta, false)));
    r.verdict = totals_verdict(r);
    if (in.ooms_delta && in.ooms_delta->low > 0) {
        r.new_ooms = true;
        r.evidence.push_back(
            fmt::format("new out-of-memory errors (num_ooms): {}", util::format_delta(*in.ooms_delta, false)));
    }
    if (in.retries_delta && in.retries_delta->low > 0) {
        r.new_retries = true;
        r.evidence.push_back(fmt::format("new cudaMalloc retries (num_alloc_retries): {}",
                                         util::format_delta(*in.retries_delta, false)));
    }
    return r;
}

}  // namespace memsnap::analysis
