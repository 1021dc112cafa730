// The interactive view's data: the replay aggregated into bands, a grid of sampled totals,
// and moments that hold exactly what is live there (see view.hpp).
#include "site_tally.hpp"
#include "step_temporaries.hpp"
#include "trace_iterations.hpp"
#include "trace_replay.hpp"

#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/analysis/trace/view.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

namespace memsnap::analysis {

namespace {

using detail::Allocation;
using detail::Replay;
using snapshot::Snapshot;
using snapshot::TraceAction;

constexpr std::uint32_t kOthers = std::numeric_limits<std::uint32_t>::max();

// The moments an allocation is live: [lo, hi], empty when lo > hi.
struct Span {
    std::size_t lo = 0, hi = 0;
};
Span span_of(const Allocation& a, std::size_t n) {
    return {a.alloc_event ? *a.alloc_event + 1 : 0, a.free_event ? *a.free_event : n};
}

// The view's own tables of stacks and frames: only those it refers to, numbered as met. A
// stack keeps its innermost view_stack_frames frames; once the frames' text passes
// view_frame_bytes, new frames share one placeholder (a crafted file of distinct stacks).
class ViewStacks {
  public:
    ViewStacks(const StackIndex& index, TraceView& view) : index_(index), view_(view) {}

    std::uint32_t of(CanonStackId canon) {
        const auto [at, added] = ids_.try_emplace(canon.value, static_cast<std::uint32_t>(view_.stacks.size()));
        if (!added) return at->second;
        const auto all = index_.frames(canon);
        const bool python = std::any_of(all.begin(), all.end(), [&](CanonFrameId f) { return index_.flags(f).python; });
        // Innermost first, as the index keeps them; the flame graph wants the outermost first.
        std::vector<std::uint32_t> frames;
        std::size_t omitted = 0;
        for (const auto f : all) {
            if (python && !index_.flags(f).python) continue;
            if (frames.size() == limits::view_stack_frames) {
                ++omitted;
                continue;
            }
            frames.push_back(frame_id(f));
        }
        if (omitted > 0) frames.push_back(label(fmt::format("[{} outer frames omitted]", omitted)));
        std::reverse(frames.begin(), frames.end());
        view_.stacks.push_back(std::move(frames));
        return at->second;
    }

  private:
    const StackIndex& index_;
    TraceView& view_;
    std::unordered_map<std::uint32_t, std::uint32_t> ids_, frame_ids_;
    std::map<std::string, std::uint32_t> labels_;
    std::size_t text_bytes_ = 0;

    std::uint32_t frame_id(CanonFrameId f) {
        if (const auto it = frame_ids_.find(f.value); it != frame_ids_.end()) return it->second;
        if (text_bytes_ >= limits::view_frame_bytes) return label("[frames beyond the view's budget]");
        FrameText text = index_.frame(f);
        text_bytes_ += text.filename.size() + text.name.size();
        const auto id = static_cast<std::uint32_t>(view_.frames.size());
        view_.frames.push_back(std::move(text));
        frame_ids_.emplace(f.value, id);
        return id;
    }

    // A frame that stands for something else, named in place of a function.
    std::uint32_t label(const std::string& name) {
        const auto [at, added] = labels_.try_emplace(name, static_cast<std::uint32_t>(view_.frames.size()));
        if (added) view_.frames.push_back({"", 0, name, false});
        return at->second;
    }
};

// Positions in [0, n]: `count` evenly spaced ones, the end, and `keep`.
std::vector<std::size_t> spaced(std::size_t n, std::size_t count, const std::vector<std::size_t>& keep) {
    std::set<std::size_t> at(keep.begin(), keep.end());
    at.insert(n);
    for (std::size_t k = 0; k < count; ++k) at.insert(count > 1 ? k * n / (count - 1) : 0);
    return {at.begin(), at.end()};
}

// A change of one site's merged bytes at a grid point.
struct Change {
    std::uint32_t site, point;
    std::int64_t bytes;
    std::uint32_t stack;  // canonical
    bool operator<(const Change& o) const { return site != o.site ? site < o.site : point < o.point; }
};

// Steps of a running sum over changes sorted by point.
std::vector<std::pair<std::uint32_t, std::int64_t>> steps_of(const std::vector<Change>& changes, std::size_t from,
                                                             std::size_t to, std::int64_t& most) {
    std::vector<std::pair<std::uint32_t, std::int64_t>> steps;
    std::int64_t sum = 0;
    for (std::size_t c = from; c < to;) {
        const auto point = changes[c].point;
        for (; c < to && changes[c].point == point; ++c) sum += changes[c].bytes;
        if (steps.empty() || steps.back().second != sum) steps.emplace_back(point, sum);
        most = std::max(most, sum);
    }
    return steps;
}

// One merged band per site, the biggest view_merged_sites of them; the rest in one band.
void merge_sites(TraceView& v, std::vector<Change> changes, ViewStacks& stacks) {
    std::sort(changes.begin(), changes.end());
    struct Run {
        std::size_t from, to;
        std::int64_t most;
        std::uint32_t stack;
    };
    std::vector<Run> runs;
    for (std::size_t c = 0; c < changes.size();) {
        Run run{c, c, 0, changes[c].stack};
        std::int64_t biggest = 0;
        for (; run.to < changes.size() && changes[run.to].site == changes[c].site; ++run.to)
            if (changes[run.to].bytes > biggest) {
                biggest = changes[run.to].bytes;
                run.stack = changes[run.to].stack;
            }
        steps_of(changes, run.from, run.to, run.most);
        runs.push_back(run);
        c = run.to;
    }
    std::stable_sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.most > b.most; });
    std::vector<Change> rest;
    for (std::size_t k = 0; k < runs.size(); ++k) {
        const auto& run = runs[k];
        if (k >= limits::view_merged_sites) {
            rest.insert(rest.end(), changes.begin() + static_cast<std::ptrdiff_t>(run.from),
                        changes.begin() + static_cast<std::ptrdiff_t>(run.to));
            continue;
        }
        std::int64_t most = 0;
        v.merged.push_back(
            {changes[run.from].site, stacks.of(CanonStackId(run.stack)), steps_of(changes, run.from, run.to, most)});
    }
    if (rest.empty()) return;
    std::stable_sort(rest.begin(), rest.end(), [](const Change& a, const Change& b) { return a.point < b.point; });
    std::int64_t most = 0;
    v.merged.push_back({kOthers, kOthers, steps_of(rest, 0, rest.size(), most)});
}

// The biggest allocations as bands; the others summed per site on the grid.
void bands_and_merged(TraceView& v, const Replay& r, const detail::SiteTally& tally,
                      const std::vector<std::uint32_t>& canon_of, ViewStacks& stacks) {
    const std::size_t n = r.events.size();
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < r.allocations.size(); ++i) {
        const auto s = span_of(r.allocations[i], n);
        if (s.lo <= s.hi && r.allocations[i].size > 0) order.push_back(i);
    }
    v.allocations = order.size();
    const std::size_t banded = std::min<std::size_t>(order.size(), limits::view_bands);
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(banded), order.end(),
                      [&](std::size_t a, std::size_t b) {
                          const auto x = r.allocations[a].size, y = r.allocations[b].size;
                          return x != y ? x > y : a < b;
                      });
    std::sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(banded));  // by alloc, as made
    for (std::size_t k = 0; k < banded; ++k) {
        const auto& a = r.allocations[order[k]];
        const auto s = span_of(a, n);
        v.bands.push_back({s.lo, s.hi, a.size, tally.site_of(order[k]), stacks.of(CanonStackId(canon_of[order[k]]))});
    }
    std::stable_sort(v.bands.begin(), v.bands.end(),
                     [](const ViewBand& a, const ViewBand& b) { return a.from < b.from; });

    // Merged: +bytes at the first grid point of the span, -bytes after its last one.
    std::vector<Change> changes;
    for (std::size_t k = banded; k < order.size(); ++k) {
        const auto& a = r.allocations[order[k]];
        const auto s = span_of(a, n);
        const auto g0 = std::lower_bound(v.grid.begin(), v.grid.end(), s.lo) - v.grid.begin();
        const auto g1 = std::upper_bound(v.grid.begin(), v.grid.end(), s.hi) - v.grid.begin();
        if (g0 >= g1) continue;  // between two grid points: too brief to draw
        const auto site = tally.site_of(order[k]);
        changes.push_back({site, static_cast<std::uint32_t>(g0), a.size, canon_of[order[k]]});
        changes.push_back({site, static_cast<std::uint32_t>(g1), -a.size, canon_of[order[k]]});
    }
    merge_sites(v, std::move(changes), stacks);
}

// The selectable moments, by position: samples, then marks that replace them where they meet.
std::vector<ViewMoment> moments_of(const TraceView& v, const Replay& r) {
    const std::size_t n = r.events.size();
    std::map<std::size_t, std::string> kinds;
    for (const auto at : spaced(n, n ? limits::view_samples : 0, {})) kinds[at] = "sample";
    kinds[n] = "end";
    std::size_t marked = 0;
    for (const auto at : v.snapshots)
        if (marked++ < limits::view_marked_moments) kinds[at] = "snapshot";
    for (const auto at : v.ooms)
        if (marked++ < limits::view_marked_moments) kinds[at] = "oom";
    kinds[v.peak] = "peak";
    std::vector<ViewMoment> out;
    for (const auto& [at, kind] : kinds) {
        ViewMoment m;
        m.at = at;
        m.kind = kind;
        m.time_us = n ? r.events[std::min(at, n - 1)].time_us : -1;
        m.allocated = r.allocated[at];
        m.reserved = r.reserved[at];
        out.push_back(std::move(m));
    }
    return out;
}

// The biggest `cap` ids by bytes as rows; the rest summed into `other_bytes`, counted in `others`.
std::vector<ViewRow> top_rows(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>& count,
                              std::size_t cap, std::int64_t& other_bytes, std::int64_t& others) {
    std::vector<std::uint32_t> held;
    for (std::uint32_t id = 0; id < bytes.size(); ++id)
        if (count[id] > 0) held.push_back(id);
    const std::size_t kept = std::min(cap, held.size());
    std::partial_sort(
        held.begin(), held.begin() + static_cast<std::ptrdiff_t>(kept), held.end(),
        [&](std::uint32_t a, std::uint32_t b) { return bytes[a] != bytes[b] ? bytes[a] > bytes[b] : a < b; });
    std::vector<ViewRow> rows;
    for (std::size_t k = 0; k < held.size(); ++k) {
        if (k < kept) {
            rows.push_back({held[k], bytes[held[k]], count[held[k]]});
        } else {
            other_bytes += bytes[held[k]];
            ++others;
        }
    }
    return rows;
}

// The reserved ranges at each moment, the biggest first (at most as many as blocks may be drawn).
std::vector<std::vector<detail::ReservedRange>> ranges_at(const TraceView& v, const Snapshot& snap, const Replay& r,
                                                          std::vector<std::size_t>& totals) {
    std::vector<std::vector<detail::ReservedRange>> out(v.moments.size());
    totals.assign(v.moments.size(), 0);
    detail::ReservedSweep sweep(snap, v.device);
    std::size_t i = r.events.size();
    for (std::size_t k = v.moments.size(); k-- > 0;) {
        for (; i > v.moments[k].at; --i) sweep.undo(r.events[i - 1], snap.stream_of(r.events[i - 1]));
        auto ranges = sweep.ranges();
        totals[k] = ranges.size();
        std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.size > b.size; });
        if (ranges.size() > limits::view_moment_blocks) ranges.resize(limits::view_moment_blocks);
        out[k] = std::move(ranges);
    }
    return out;
}

// A moment's segments with the blocks live in them, within the block budget.
// A moment's budget of blocks: a sample, one of many alike, draws a quarter of a marked moment's.
std::size_t block_budget(const ViewMoment& m) {
    return m.kind == "sample" ? limits::view_moment_blocks / 4 : limits::view_moment_blocks;
}

void segments_into(ViewMoment& m, const std::vector<detail::ReservedRange>& ranges,
                   const std::map<std::int64_t, std::int64_t>& live) {
    std::size_t budget = block_budget(m);
    for (const auto& range : ranges) {
        ViewSegment seg{range.address, range.size, range.stream, {}};
        for (auto it = live.lower_bound(range.address); it != live.end() && it->first < range.address + range.size;
             ++it)
            seg.blocks.push_back({it->first - range.address, it->second, 'a'});
        if (seg.blocks.size() > budget) break;
        budget -= seg.blocks.size();
        m.segments.push_back(std::move(seg));
    }
}

// The end as the snapshot holds it: blocks pending free told apart.
void end_segments(ViewMoment& m, const Snapshot& snap, int device) {
    std::vector<const snapshot::Segment*> segs;
    for (const auto& seg : snap.segments)
        if (seg.device == device && !seg.placeholder) segs.push_back(&seg);
    std::stable_sort(segs.begin(), segs.end(),
                     [](const auto* a, const auto* b) { return a->total_size > b->total_size; });
    m.segments_total = segs.size();
    std::size_t budget = block_budget(m);
    for (const auto* s : segs) {
        ViewSegment seg{s->address, s->total_size, s->stream, {}};
        for (const auto& b : snap.blocks_of(*s))
            if (b.active()) seg.blocks.push_back({b.address - s->address, b.size, b.live() ? 'a' : 'p'});
        if (seg.blocks.size() > budget) break;
        budget -= seg.blocks.size();
        m.segments.push_back(std::move(seg));
    }
}

// What is live at each moment, by site and by stack, and in which segments: one sweep over
// the allocations' spans.
void fill_moments(TraceView& v, const Snapshot& snap, const Replay& r, const detail::SiteTally& tally,
                  const std::vector<std::uint32_t>& canon_of, ViewStacks& stacks) {
    const std::size_t n = r.events.size();
    struct Edge {
        std::size_t pos;
        std::uint32_t index;
        bool add;  // removals first where they meet, so that a reused address ends up live
    };
    std::vector<Edge> edges;
    std::unordered_map<std::uint32_t, std::uint32_t> dense;  // canonical stack -> tally slot
    std::vector<std::uint32_t> dense_of(r.allocations.size()), canon_at;
    for (std::uint32_t i = 0; i < r.allocations.size(); ++i) {
        const auto [at, added] = dense.try_emplace(canon_of[i], static_cast<std::uint32_t>(canon_at.size()));
        if (added) canon_at.push_back(canon_of[i]);
        dense_of[i] = at->second;
        const auto s = span_of(r.allocations[i], n);
        if (s.lo > s.hi) continue;
        edges.push_back({s.lo, i, true});
        edges.push_back({s.hi + 1, i, false});
    }
    std::sort(edges.begin(), edges.end(),
              [](const Edge& a, const Edge& b) { return a.pos != b.pos ? a.pos < b.pos : a.add < b.add; });
    std::vector<std::size_t> totals;
    const auto ranges = ranges_at(v, snap, r, totals);
    std::vector<std::int64_t> site_bytes(tally.site_count()), site_count(tally.site_count());
    std::vector<std::int64_t> stack_bytes(canon_at.size()), stack_count(canon_at.size());
    std::map<std::int64_t, std::int64_t> live;  // address -> bytes
    std::size_t e = 0;
    for (std::size_t k = 0; k < v.moments.size(); ++k) {
        auto& m = v.moments[k];
        for (; e < edges.size() && edges[e].pos <= m.at; ++e) {
            const auto& a = r.allocations[edges[e].index];
            const std::int64_t sign = edges[e].add ? 1 : -1;
            site_bytes[tally.site_of(edges[e].index)] += sign * a.size;
            site_count[tally.site_of(edges[e].index)] += sign;
            stack_bytes[dense_of[edges[e].index]] += sign * a.size;
            stack_count[dense_of[edges[e].index]] += sign;
            if (edges[e].add)
                live[a.address] = a.size;
            else if (const auto it = live.find(a.address); it != live.end() && it->second == a.size)
                live.erase(it);
        }
        m.sites = top_rows(site_bytes, site_count, limits::view_moment_sites, m.other_site_bytes, m.other_sites);
        std::int64_t other_stacks = 0;
        m.stacks = top_rows(stack_bytes, stack_count, limits::view_moment_stacks, m.other_stack_bytes, other_stacks);
        for (auto& row : m.stacks) row.id = stacks.of(CanonStackId(canon_at[row.id]));
        m.unattributed = m.allocated - std::accumulate(site_bytes.begin(), site_bytes.end(), std::int64_t{0});
        m.segments_total = totals[k];
        if (m.at == n && m.kind == "end")
            end_segments(m, snap, v.device);
        else
            segments_into(m, ranges[k], live);
    }
}

}  // namespace

TraceView trace_view(const Snapshot& snap, const AnalysisOptions& options) {
    TraceView v;
    v.file = snap.source.path;
    v.device = options.device ? *options.device : default_trace_device(snap);
    const auto r = detail::replay(snap, v.device);
    const std::size_t n = r.events.size();
    v.events = n;
    if (n) {
        v.time_first_us = r.events.front().time_us;
        v.time_last_us = r.events.back().time_us;
    }
    v.peak = static_cast<std::size_t>(std::max_element(r.allocated.begin(), r.allocated.end()) - r.allocated.begin());
    for (std::size_t i = 0; i < n; ++i) {
        if (r.events[i].action() == TraceAction::oom) v.ooms.push_back(i);
        if (r.events[i].action() == TraceAction::snapshot) v.snapshots.push_back(i);
    }
    StackIndex index({&snap}, options.rules, options.stacks);
    const detail::SiteTally tally(r.allocations, index, detail::step_temporaries(r, index));
    if (n) v.iterations = detail::find_iterations(snap, r, v.device, index).starts;
    if (v.iterations.size() > limits::view_grid / 2) v.iterations.clear();  // too many to mark
    for (std::uint32_t s = 0; s < tally.site_count(); ++s)
        v.sites.push_back({tally.site(s).site, tally.site(s).category});
    std::vector<std::uint32_t> canon_of;
    canon_of.reserve(r.allocations.size());
    for (const auto& a : r.allocations) canon_of.push_back(index.stack(0, a.stack).value);
    ViewStacks stacks(index, v);

    std::vector<std::size_t> marks = v.ooms;
    marks.insert(marks.end(), v.snapshots.begin(), v.snapshots.end());
    marks.push_back(v.peak);
    if (marks.size() > limits::view_grid / 2) marks.resize(limits::view_grid / 2);
    marks.push_back(v.peak);
    v.grid = spaced(n, n ? limits::view_grid : 0, marks);
    for (const auto at : v.grid) {
        v.grid_allocated.push_back(r.allocated[at]);
        v.grid_reserved.push_back(r.reserved[at]);
    }
    bands_and_merged(v, r, tally, canon_of, stacks);
    v.moments = moments_of(v, r);
    fill_moments(v, snap, r, tally, canon_of, stacks);
    return v;
}

}  // namespace memsnap::analysis
