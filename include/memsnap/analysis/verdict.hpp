#pragma once
// Classifies a before/after change of allocator counters into the verdicts of
// docs/leak-patterns.md. Works on ranges so that truncated memory_summary values are judged
// honestly; exact sources (memory_stats, snapshots) pass low == high.
//
// Decision (per metric, on delta = after − before as a range):
//   threshold(m) = max(1 MiB, 0.5% of before(m).high)     — noise floor, see noise_threshold()
//   grows  when delta.low  >  threshold   (certainly above the noise floor)
//   falls  when delta.high < −threshold
//   flat   otherwise; if the range straddles ±threshold the call is "flat (uncertain)" and a
//          note says so, never a growth claim.
// Verdict:
//   allocated grows                                         → leak (whatever reserved does)
//   allocated flat/falls, reserved grows, non-releasable grows → fragmentation
//   allocated flat/falls, reserved grows, non-releasable flat  → cache_growth
//   nothing grows, allocated or reserved falls              → shrink
//   otherwise                                               → stable
// New OOMs / allocation retries are reported as evidence and advice, they do not change the
// verdict.

#include <memsnap/stats/range.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::analysis {

enum class Verdict { leak, fragmentation, cache_growth, stable, shrink };
std::string_view to_string(Verdict verdict);

enum class Change { grows, flat, falls };
std::string_view to_string(Change change);

// One metric judged against its noise threshold.
struct ChangeCall {
    Change change = Change::flat;
    bool uncertain = false;  // flat, but the range reaches beyond ±threshold
    std::int64_t threshold = 0;
};

// max(1 MiB, before.high / 200): below this a change is allocator noise.
std::int64_t noise_threshold(ByteRange before);
ChangeCall judge_change(ByteRange before, ByteRange delta);

struct VerdictInput {
    ByteRange allocated_before, allocated_delta;  // allocated_bytes.all.current
    ByteRange reserved_before, reserved_delta;    // reserved_bytes.all.current
    // inactive_split_bytes.all.current ("Non-releasable memory"); unknown → cache_growth
    // cannot be told from fragmentation, which a note says.
    std::optional<ByteRange> inactive_split_before, inactive_split_delta;
    std::optional<ByteRange> ooms_delta, retries_delta;  // num_ooms, num_alloc_retries
};

struct VerdictResult {
    Verdict verdict = Verdict::stable;
    std::vector<std::string> evidence;  // one sentence per fact used, with numbers
    std::vector<std::string> advice;    // what to do next (from leak-patterns.md)
};

VerdictResult classify(const VerdictInput& input);

}  // namespace memsnap::analysis
