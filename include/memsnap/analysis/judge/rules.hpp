#pragma once
// The rules that turn numbers into verdicts, one place for every command. Each rule checks its
// verdict's preconditions (verdict.hpp) before it gives one; without them it compares levels.
//
// A pair of captures (diff), on allocated memory against its noise floor:
//   grows, behaviour allowed: sites with a stack whose new blocks stay carry more than the
//        floor and more than more bytes in as many blocks do -> leak (first appearances of
//        one-time categories beside them do not hide it); else the larger of first appearances
//        (one_time_growth) and more bytes in as many blocks (shape_growth); growth without a
//        stack to place it -> growth.
//   grows, behaviour not allowed: shape_growth when that explains most, else growth.
//   flat or falls, behaviour allowed, the same leak condition (new blocks hidden by frees) -> leak.
//   reserved grows: fragmentation when behaviour is allowed, allocated is within the floor, live
//        blocks did not grow and the non-releasable part of the growth is larger than the
//        releasable part and past the floor; cache_growth when most of it is releasable; else
//        growth (another run's cache holds more; which part is fragmentation cannot be told).
//   reserved grows and allocated is not known (a partial table) -> growth.
//   allocated or reserved falls, nothing grows -> shrink; nothing changes -> stable.
// A site's verdict never contradicts the pair's: a leak site only under a leak.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/util/checked.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace memsnap::analysis {

// What a site's change looks like, before any verdict.
enum class SiteShape : std::uint8_t { freed, stable, more_bytes, first_appearance, stays };
// `first_appearance`: a one-time category (gradients, optimizer state, workspaces, autocast
// weight copies) at a site that held none before.
SiteShape shape_of(std::int64_t delta_bytes, std::int64_t delta_blocks, std::int64_t before_blocks, Category category);

// The growth of a pair's sites, by shape (bytes).
struct SiteWeights {
    std::int64_t stays = 0, first_appearance = 0, more_bytes = 0;
    std::int64_t unplaced = 0;  // growth at sites without a stack
    std::size_t stays_sites = 0;
    std::int64_t stays_blocks = 0;
    void add(SiteShape shape, std::int64_t delta_bytes, std::int64_t delta_blocks, bool has_stack);
};

struct PairReading {
    const TotalsReading* totals = nullptr;
    std::int64_t allocated_threshold = 0, reserved_threshold = 0;
    // How reserved growth divides (snapshots); unknown for summaries.
    std::optional<std::int64_t> releasable_delta, non_releasable_delta;
    std::optional<SiteWeights> weights;  // snapshots: the sites' growth
    const Comparability* comparability = nullptr;
};

struct PairVerdict {
    Verdict verdict = Verdict::stable;
    Facts evidence;  // the sites' part, and why growth is not a behaviour verdict
};
PairVerdict judge_pair(const PairReading& reading);

// A site whose new blocks stay carries the pair's leak when its growth is past the floor on its
// own, or 2% or more of all such growth (a retained graph spreads over many small sites);
// smaller ones are growth: allocator noise could make them.
bool part_of_leak(std::int64_t delta_bytes, const SiteWeights& weights, std::int64_t threshold);

// A site of a pair, under the pair's verdict.
Verdict judge_site(SiteShape shape, bool has_stack, Verdict overall, const Comparability& comparability,
                   bool carries_leak = true);

// Why growth is given instead of a behaviour verdict (FactKind::growth_reason).
Fact growth_reason(const Comparability& comparability, bool placed);
const char* growth_reason_word(const Comparability& comparability, bool placed);

// A series of byte counts over ordered points (trend), after warm-up: the intervals up and
// down past the noise floor.
struct SeriesShape {
    std::size_t points = 0;
    std::size_t ups = 0, downs = 0;
    util::Wide up_sum = 0, down_sum = 0;  // many intervals of int64 bytes may pass 2^63
    std::int64_t max_up = 0;
    std::int64_t net = 0;     // last − first
    std::int64_t spread = 0;  // largest − smallest
    std::int64_t noise = 0;
    bool blocks_constant = false;  // the same number of blocks at every point
    double r2 = 0;
};
// Behaviour verdicts only when `behaviour_allowed`; else the levels: growth, shrink, stable or
// shape_growth, first against last, and differs when first and last agree but the points
// between lie past the noise floor. Without a known order the points are a set, not a series:
// differs when they lie further apart than the noise floor, else stable, whatever order they
// were given in. `leak` needs four points or more (see
// judge_trend for three).
Verdict judge_series(const SeriesShape& shape, bool behaviour_allowed, bool ordered = true);

}  // namespace memsnap::analysis
