#pragma once
// The verdicts memsnap gives, one closed vocabulary for every command, and the reading of a
// before/after change of the allocator's totals against their noise floor.
//
// Verdicts are of two kinds. Level verdicts say what differs between captures (growth,
// shape_growth, cache_growth, shrink, stable, freed, live, current, irregular, differs) and need no
// more than the numbers. Behaviour verdicts (leak, one_time_growth, warmup, sawtooth,
// fragmentation) say what a program does over time, and need a known order of the captures
// and a comparable pair: one process shown (shared trace events), or one process not ruled
// out and the same workload at both captures, with that caveat printed (comparability.hpp).
// Each verdict's preconditions are in the table below and in the man page.
//
// Per metric, on delta = after − before as a range:
//   threshold = max(1 MiB, 0.5% of the larger of before and after)   — the noise floor
//   grows  when delta.low  >  threshold   (certainly above the noise floor)
//   falls  when delta.high < −threshold
//   flat   otherwise; if the range straddles ±threshold the call is "flat (uncertain)".

#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/util/range.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace memsnap::analysis {

enum class Verdict : std::uint8_t {
    leak,             // blocks that are new and stay, step after step (behaviour)
    one_time_growth,  // memory made once and then kept: a first step, a cache filled (behaviour)
    shape_growth,     // as many live blocks as before, or fewer, holding more bytes (level)
    warmup,           // trace: live since before the first iteration (behaviour)
    sawtooth,         // trend: grows and is freed again (behaviour)
    fragmentation,    // reserved grows in partly used segments the cache cannot release (behaviour)
    cache_growth,     // reserved grows as free cache that empty_cache can release (level)
    shrink,           // less memory than before (level)
    stable,           // no change past the noise floor (level)
    irregular,        // trend: growth that fits no shape (level)
    freed,            // a site: its blocks were freed (level)
    current,          // trace: made in the unfinished last iteration (level)
    live,             // trace: live at the end, no iterations to judge by (level)
    growth,           // the levels differ; the behaviour is unknown (level)
    differs,          // trend: the levels differ, with no direction (no known order, or back where they began) (level)
};

struct VerdictInfo {
    Verdict verdict;
    std::string_view spelling;  // JSON, and upper case in text
    bool behaviour;             // needs a known order and a comparable pair
    std::string_view meaning;
    std::string_view preconditions;  // when memsnap gives it
    std::string_view v1;             // its spelling in JSON schema_version 1, if it differed
};
// Every verdict, in declaration order.
std::span<const VerdictInfo> verdicts();
std::string_view to_string(Verdict verdict);
std::optional<Verdict> parse_verdict(std::string_view spelling);
bool is_behaviour(Verdict verdict);

enum class Change : std::uint8_t { grows, flat, falls };
std::string_view to_string(Change change);

struct ChangeCall {
    Change change = Change::flat;
    bool uncertain = false;  // flat, but the range reaches beyond ±threshold
    std::int64_t threshold = 0;
};

// max(1 MiB, larger.high / 200): below this a change is allocator noise.
std::int64_t noise_threshold(ByteRange larger);
// The noise floor of two values of one total.
std::int64_t noise_threshold(std::int64_t before, std::int64_t after);
ChangeCall judge_change(ByteRange larger, ByteRange delta);

struct MetricChange {
    ByteRange before, delta;
};

struct TotalsInput {
    std::optional<MetricChange> allocated;               // allocated_bytes.all.current
    std::optional<MetricChange> reserved;                // reserved_bytes.all.current
    std::optional<MetricChange> non_releasable;          // inactive_split_bytes.all.current, or the snapshot's own
    std::optional<MetricChange> releasable;              // free cache empty_cache can return (snapshots)
    std::optional<MetricChange> live_blocks;             // allocation.all.current (a count)
    std::optional<ByteRange> ooms_delta, retries_delta;  // num_ooms, num_alloc_retries
};

struct TotalsReading {
    std::optional<ChangeCall> allocated, reserved, non_releasable;
    bool live_blocks_grew = false;                // past zero, certainly
    std::optional<ByteRange> live_blocks_delta;   // when the count is known
    std::optional<ByteRange> live_blocks_before;  // the same
    Facts evidence;                               // one fact per figure used
    bool new_ooms = false, new_retries = false;
};

// Throws Error (input) when neither allocated nor reserved memory is known.
TotalsReading read_totals(const TotalsInput& input);

}  // namespace memsnap::analysis
