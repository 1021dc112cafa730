#pragma once
// Internal to `trend`: whether the captures of a series are comparable moments of one program,
// pair by neighbouring pair, and the series' comparability (its weakest pair).

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/series/trend.hpp>

#include <optional>
#include <vector>

namespace memsnap::analysis::detail {

// Two neighbouring snapshots of a series, `before` earlier in the order judged.
Comparability compare_contents(const SnapshotContents& before, const SnapshotContents& after, bool order_by_steps,
                               std::optional<int> device);

// The series' comparability from its pairs: no beats unknown beats yes; the evidence of the
// deciding pairs, each fact naming its files.
Comparability weakest(const std::vector<Comparability>& pairs, const std::vector<std::string>& files);

}  // namespace memsnap::analysis::detail
