#pragma once
// Reading a before/after change of the allocator's totals, and the verdicts memsnap gives.
// Works on ranges so that truncated memory_summary values are judged honestly; exact sources
// (memory_stats, snapshots) pass low == high.
//
// Per metric, on delta = after − before as a range:
//   threshold(m) = max(1 MiB, 0.5% of before(m).high)     — noise floor, see noise_threshold()
//   grows  when delta.low  >  threshold   (certainly above the noise floor)
//   falls  when delta.high < −threshold
//   flat   otherwise; if the range straddles ±threshold the call is "flat (uncertain)".
// What the totals alone say (TotalsReading::verdict):
//   allocated grows                                            → leak
//   allocated flat/falls, reserved grows, non-releasable grows → fragmentation
//   allocated flat/falls, reserved grows, non-releasable flat  → cache_growth
//   nothing grows, allocated or reserved falls                 → shrink
//   otherwise                                                  → stable
// The final verdict weighs this with what else is known (explain.hpp for snapshots,
// stats_diff.hpp for summaries): whether both captures come from one process, which blocks
// are new and stay, their categories, the allocation count.

#include <memsnap/stats/range.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::analysis {

enum class Verdict {
    leak,             // live blocks that are new and stay, in one process
    one_time_growth,  // gradients, optimizer state, workspaces appearing once (warm-up)
    shape_growth,     // as many live blocks as before, more bytes
    growth,           // allocated grows, but these captures cannot call it a leak
    fragmentation,
    cache_growth,
    stable,
    shrink,
};
std::string_view to_string(Verdict verdict);

enum class SiteVerdict { leak, one_time, shape_growth, growth, freed, stable };
std::string_view to_string(SiteVerdict verdict);

enum class Change { grows, flat, falls };
std::string_view to_string(Change change);

struct ChangeCall {
    Change change = Change::flat;
    bool uncertain = false;  // flat, but the range reaches beyond ±threshold
    std::int64_t threshold = 0;
};

// max(1 MiB, before.high / 200): below this a change is allocator noise.
std::int64_t noise_threshold(ByteRange before);
ChangeCall judge_change(ByteRange before, ByteRange delta);

struct MetricChange {
    ByteRange before, delta;
};

struct TotalsInput {
    std::optional<MetricChange> allocated;               // allocated_bytes.all.current
    std::optional<MetricChange> reserved;                // reserved_bytes.all.current
    std::optional<MetricChange> inactive_split;          // inactive_split_bytes.all.current
    std::optional<MetricChange> live_blocks;             // allocation.all.current (a count)
    std::optional<ByteRange> ooms_delta, retries_delta;  // num_ooms, num_alloc_retries
};

struct TotalsReading {
    std::optional<ChangeCall> allocated, reserved, inactive_split;
    Verdict verdict = Verdict::stable;  // what the totals alone say (see above)
    std::vector<std::string> evidence;  // one sentence per fact used, with numbers
    bool new_ooms = false, new_retries = false;
};

// Throws Error (input) when neither allocated nor reserved memory is known.
TotalsReading read_totals(const TotalsInput& input);

struct VerdictResult {
    Verdict verdict = Verdict::stable;
    std::vector<std::string> evidence;  // one sentence per fact used, with numbers
    std::vector<std::string> advice;    // what to do next
};

}  // namespace memsnap::analysis
