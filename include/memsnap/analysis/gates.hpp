#pragma once
// The CI gates, the same in diff, trend and trace (exit 3 when one trips):
//   --fail-on-growth RATE  allocated memory (or, for snapshots, a site) grew faster than RATE
//                          per step, or per capture when steps are unknown (per iteration in a
//                          trace). A level comparison, as of a baseline against a change: it
//                          trips on growth between separate runs too, and says it is growth,
//                          not a leak. Summary ranges trip it only by their lower end.
//   --fail-on-leak         a leak verdict holds (its preconditions met: comparable captures in
//                          a known order; three whole iterations in a trace). Where the
//                          preconditions do not hold, the gate cannot be judged: it does not
//                          trip (exit 0) and says so, so that CI does not read it as a pass.

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/trace/trace.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace memsnap::analysis {

struct Gates {
    std::optional<std::int64_t> growth_per_step;  // --fail-on-growth
    bool leak = false;                            // --fail-on-leak
    bool any() const { return growth_per_step || leak; }
};

// A gate that tripped, or one that could not be judged: which, and why.
struct GateTrip {
    std::string option;  // "--fail-on-growth" or "--fail-on-leak"
    Facts reasons;
    bool tripped = true;  // false: --fail-on-leak could not be judged (reasons say why); exit 0
};

std::optional<GateTrip> check_gates(const std::variant<SnapshotDiff, StatsDiff>& diff, const Gates& gates);
std::optional<GateTrip> check_gates(const TrendResult& trend, const Gates& gates);
std::optional<GateTrip> check_gates(const TraceResult& trace, const Gates& gates);

}  // namespace memsnap::analysis
