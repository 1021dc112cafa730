#pragma once
// Renderers for `memsnap diff` on snapshots. Writers never compute: they print a SnapshotDiff.

#include <memsnap/analysis/snapshot_diff.hpp>

#include <string>
#include <string_view>

namespace memsnap::report {

struct DiffRenderOptions {
    std::size_t top = 10;         // 0: all sites
    bool color = false;           // ANSI colour in text output
    std::int64_t min_growth = 0;  // hide sites with |delta_bytes| below this
};

std::string render_snapshot_diff_text(const analysis::SnapshotDiff&, const DiffRenderOptions&);
std::string render_snapshot_diff_json(const analysis::SnapshotDiff&, const DiffRenderOptions&);
std::string render_snapshot_diff_markdown(const analysis::SnapshotDiff&, const DiffRenderOptions&);
std::string render_snapshot_diff_csv(const analysis::SnapshotDiff&, const DiffRenderOptions&);
// Folded stacks ("outer;...;inner bytes" per line) of the grown bytes, for flamegraph.pl and
// speedscope; shrinking stacks are left out (flame graphs take no negative widths).
std::string render_snapshot_diff_folded(const analysis::SnapshotDiff&, const DiffRenderOptions&);

}  // namespace memsnap::report
