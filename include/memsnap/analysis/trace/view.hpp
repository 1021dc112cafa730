#pragma once
// The interactive view's data (`--format html`): one capture's trace replayed and aggregated
// so that the page stays small and opens at once whatever the capture's size. Allocations are
// bands over moments (the biggest on their own, the rest merged into one band per site);
// selectable moments (evenly spaced samples, the peak, every OOM and `snapshot` event, the
// end) carry exactly what is live there, by site and by stack, and the allocator's segments.
// A moment m is "just before trace event m" (m = events: the end), as `trace` counts events.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/options.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace memsnap::analysis {

struct ViewSite {
    SiteKey site;
    Category category = Category::unknown;
};

// One allocation, live from moment `from` to moment `to`, both included.
struct ViewBand {
    std::size_t from = 0, to = 0;
    std::int64_t bytes = 0;
    std::uint32_t site = 0, stack = 0;  // into TraceView::sites, TraceView::stacks
};

// The allocations of one site too small for bands of their own: bytes at each grid point
// where the sum changes (grid index, bytes from there on).
struct ViewMergedBand {
    std::uint32_t site = 0, stack = 0;  // the site's biggest stack; both max() for the smallest sites, summed
    std::vector<std::pair<std::uint32_t, std::int64_t>> steps;
};

struct ViewRow {  // a site's or a stack's live bytes at a moment
    std::uint32_t id = 0;
    std::int64_t bytes = 0, allocations = 0;
};

struct ViewBlock {
    std::int64_t offset = 0, size = 0;  // from the segment's address
    char state = 'a';                   // a allocated, p pending free, f free (cached)
};

struct ViewSegment {
    std::int64_t address = 0, size = 0, stream = 0;
    std::vector<ViewBlock> blocks;  // allocated and pending-free ones; the gaps are free
};

struct ViewMoment {
    std::size_t at = 0;
    std::string kind;  // sample, peak, oom, snapshot, end
    std::int64_t time_us = -1;
    std::int64_t allocated = 0, reserved = 0;  // the replayed totals
    std::vector<ViewRow> sites, stacks;        // the biggest first
    std::int64_t other_site_bytes = 0, other_sites = 0;
    std::int64_t other_stack_bytes = 0;
    // allocated minus what the replay attributes to allocations (non-zero only where the
    // replay and the snapshot disagree), so that the rows always sum to `allocated`.
    std::int64_t unattributed = 0;
    std::vector<ViewSegment> segments;  // the biggest first, within the block budget
    std::size_t segments_total = 0;
};

struct TraceView {
    std::string file;
    int device = 0;
    std::size_t events = 0;  // 0: no trace, only the end
    std::int64_t time_first_us = -1, time_last_us = -1;
    std::vector<FrameText> frames;
    std::vector<std::vector<std::uint32_t>> stacks;  // frame ids, outermost first
    std::vector<ViewSite> sites;
    std::size_t allocations = 0;  // in the replay, whether banded or merged
    std::vector<ViewBand> bands;  // by `from`
    std::vector<std::size_t> grid;
    std::vector<std::int64_t> grid_allocated, grid_reserved;
    std::vector<ViewMergedBand> merged;
    std::vector<ViewMoment> moments;  // by `at`
    std::size_t peak = 0;
    std::vector<std::size_t> iterations, snapshots, ooms;
};

// Throws Error: input when the capture holds neither segments nor trace events.
TraceView trace_view(const snapshot::Snapshot& snap, const AnalysisOptions& options);

}  // namespace memsnap::analysis
