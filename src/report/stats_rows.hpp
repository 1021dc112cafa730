#pragma once
// Internal: the rows of a summary/stats diff that people read first, shared by the text and
// Markdown writers (the full set is in JSON and CSV).

#include <memsnap/analysis/diff/stats_diff.hpp>

#include <string>
#include <vector>

namespace memsnap::report::detail {

struct StatsRow {
    std::string metric, before, after, delta, per_step;
};

std::vector<StatsRow> key_rows(const analysis::DeviceDiff& d);
// "#0 before line 12 step 100, #1 after line 40 step 500".
std::string points_text(const analysis::DeviceDiff& d);
// One line per trend: direction, first→last, slope and every value.
std::vector<std::string> series_lines(const analysis::DeviceDiff& d);

}  // namespace memsnap::report::detail
