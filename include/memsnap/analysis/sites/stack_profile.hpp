#pragma once
// Bytes per allocation stack, for pictures and other tools: folded stacks (flamegraph.pl,
// speedscope), the SVG flame graph, the DOT call graph and pprof. One shape for every
// command: `info` (live bytes), `diff` (before and after of each stack), `trace` (live at the
// peak or at the end) and `trend` (sites, first and last capture).

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace memsnap::analysis {

// What a picture shows, as data (report/ words it as the picture's title).
struct ProfileSubject {
    enum class Kind { live, live_at_peak, live_at_end, diff, trend_sites, ranks };
    Kind kind = Kind::live;
    std::string file, other_file;  // the capture; a diff's before and after
    std::int64_t bytes = 0;        // live_at_peak: allocated at the peak
    std::size_t number = 0;        // live_at_peak: the peak's event; trend_sites: captures; ranks: ranks
};

struct StackProfile {
    ProfileSubject subject;
    std::string measure;        // "live bytes", or "bytes" of a diff's sides
    bool differential = false;  // samples hold before (base) and after
    std::vector<FrameText> frame_table;
    std::vector<ProfileSample> samples;  // one per distinct stack, in stack order
};

// Which side of a diff a one-sided picture shows (--side).
enum class Side { delta, before, after };

// Bytes and counts per (normalised stack, category), as the samples of `out`.
using StackTotals = std::map<std::pair<CanonStackId, Category>, std::pair<std::int64_t, std::int64_t>>;
void add_samples(StackProfile& out, const StackIndex& index, const StackTotals& totals);

// Live blocks of a snapshot (of options.device), by normalised stack.
StackProfile live_stacks(const snapshot::Snapshot& snap, const AnalysisOptions& options);

// The samples of `profile` as one-sided values: live bytes, or a diff's side. For `delta`,
// only growth (flame graphs take no negative widths).
std::vector<std::pair<const ProfileSample*, std::int64_t>> sided(const StackProfile& profile, Side side);

}  // namespace memsnap::analysis
