#include "peak_moment.hpp"
#include "site_tally.hpp"
#include "step_temporaries.hpp"
#include "trace_iterations.hpp"
#include "trace_oom.hpp"
#include "trace_replay.hpp"

#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace memsnap::analysis {

namespace {

using detail::Allocation;
using detail::Replay;
using detail::SiteTally;
using snapshot::Snapshot;
using snapshot::TraceAction;

// The device to replay: --device, else default_trace_device.
int pick_device(const Snapshot& snap, std::optional<int> wanted) {
    if (wanted) {
        std::set<int> traced;
        for (std::size_t i = 0; i < snap.events.size(); ++i) traced.insert(snap.events.device_at(i));
        if (!traced.count(*wanted) && !devices_of(snap).count(*wanted)) require_device(snap, wanted);
        return *wanted;
    }
    return default_trace_device(snap);
}

// At most kMaxTimelinePoints points of the timeline, evenly spaced, with the peak and `marks` kept.
std::vector<TimelinePoint> timeline(const Replay& r, std::size_t peak, const std::vector<std::size_t>& marks) {
    const std::size_t n = r.events.size();
    std::set<std::size_t> keep(marks.begin(), marks.end());
    keep.insert(peak);
    keep.insert(n);
    const std::size_t step = std::max<std::size_t>(1, (n + kMaxTimelinePoints - 1) / kMaxTimelinePoints);
    for (std::size_t i = 0; i <= n; i += step) keep.insert(i);
    std::vector<TimelinePoint> out;
    for (const std::size_t i : keep) {
        const std::int64_t time = n ? r.events.time_before(i) : -1;
        out.push_back({i, time, r.allocated[i], r.reserved[i]});
    }
    return out;
}

std::optional<FrameText> user_frame(const StackIndex& index, CanonStackId stack) {
    for (const auto f : index.frames(stack))
        if (index.flags(f).user) return index.frame(f);
    return std::nullopt;
}

// The OOM events of the replay, the first `limit` of them explained (each costs a pass over
// the allocations), all of them counted in `total`.
std::vector<OomExplanation> ooms_of(const Snapshot& snap, const Replay& r, int device, StackIndex& index,
                                    const SiteTally& tally, FrameTableBuilder& frames, const AnalysisOptions& options,
                                    const TraceOptions& trace_options, std::size_t limit, std::size_t& total) {
    std::vector<OomExplanation> out;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        const auto& e = r.events[i];
        if (e.action() != TraceAction::oom) continue;
        if (total++ >= limit) continue;
        OomExplanation oom;
        oom.device = device;
        oom.time_us = e.time_us;
        oom.event = i;
        oom.requested_bytes = e.size;
        oom.device_free_bytes = e.addr;  // an oom entry carries device_free in place of addr
        oom.allocated_bytes = r.allocated[i];
        oom.reserved_bytes = r.reserved[i];
        oom.stream = snap.stream_of(e);
        oom.device_memory_bytes = trace_options.device_memory;
        const auto free = detail::free_space_at(snap, r, device, i, oom.stream);
        oom.largest_free_block_bytes = free.largest;
        oom.largest_free_block_same_stream_bytes = free.largest_same_stream;
        const auto canon = index.stack(0, e.stack);
        oom.frame = user_frame(index, canon);
        oom.stack.size = e.size;
        oom.stack.category = index.category(0, e.stack, e.size);
        frames.add_frames(canon, oom.stack);
        oom.usage = tally.usage([i](const Allocation& a) { return a.live_at(i); }, options.top);
        detail::classify_oom(oom, snap.source.path);
        out.push_back(std::move(oom));
    }
    return out;
}

// The allocations live at the end, by site, with what each iteration left; the first
// `limit` sites by rank are kept. Sites times iterations can be far more than the
// allocations, so counts per iteration are kept sparse, as sorted (site, iteration) records.
// `out` gets the sites and how many there are, and what those past `limit` hold.
void live_sites(const Replay& r, const SiteTally& tally, const detail::Iterations& it, StackIndex& index,
                FrameTableBuilder& frames, std::size_t limit, TraceResult& out) {
    struct Made {  // one live allocation
        std::uint32_t site;
        std::size_t iteration;  // complete iterations only
        std::int64_t bytes;
        bool operator<(const Made& o) const { return site != o.site ? site < o.site : iteration < o.iteration; }
    };
    struct Counts : TraceCounts {  // a TraceSite's numbers, before the site is known to be kept
        Verdict verdict = Verdict::live;
    };
    const std::size_t complete = it.complete();
    std::vector<Counts> all(tally.site_count());
    std::vector<Made> made;
    for (std::size_t i = 0; i < r.allocations.size(); ++i) {
        const auto& a = r.allocations[i];
        if (a.free_event) continue;
        auto& s = all[tally.site_of(i)];
        ++s.live_allocations;
        s.live_bytes += a.size;
        const long k = a.alloc_event && !it.starts.empty() ? it.index_of(*a.alloc_event) : -1;
        if (k < 0)
            ++s.warmup_allocations;
        else if (static_cast<std::size_t>(k) < complete)
            made.push_back({tally.site_of(i), static_cast<std::size_t>(k), a.size});
        else
            ++s.current_allocations;
    }
    std::sort(made.begin(), made.end());
    // Where each site's records begin in `made`.
    std::vector<std::size_t> begin(all.size() + 1, made.size());
    for (std::size_t m = made.size(); m-- > 0;) begin[made[m].site] = m;
    for (std::size_t id = all.size(); id-- > 0;) begin[id] = std::min(begin[id], begin[id + 1]);

    std::vector<std::uint32_t> ranked;
    const std::size_t from = complete >= 3 ? 1 : 0;  // the first may hold one-time growth
    for (std::uint32_t id = 0; id < all.size(); ++id) {
        auto& s = all[id];
        if (s.live_allocations == 0) continue;
        // Count per iteration from `from` on: steady when every iteration made the same number.
        std::int64_t first_count = -1, bytes = 0;
        std::size_t iterations_seen = 0;
        bool steady = complete >= 2;
        for (std::size_t m = begin[id]; m < begin[id + 1] && steady;) {
            const std::size_t k = made[m].iteration;
            std::int64_t count = 0;
            for (; m < begin[id + 1] && made[m].iteration == k; ++m) {
                ++count;
                if (k >= from) bytes += made[m].bytes;
            }
            if (k < from) continue;
            ++iterations_seen;
            if (first_count < 0) first_count = count;
            steady = count == first_count;
        }
        steady = steady && iterations_seen == complete - from && first_count > 0;
        // Per-iteration verdicts need three whole iterations from real steps.
        if (!it.judged()) {
            s.verdict = Verdict::live;
        } else if (steady) {
            s.verdict = Verdict::leak;
            s.leak_allocations_per_iteration = first_count;
            s.leak_bytes_per_iteration = bytes / static_cast<std::int64_t>(complete - from);
        } else if (begin[id] == begin[id + 1]) {
            s.verdict = s.current_allocations > 0 ? Verdict::current : Verdict::warmup;
        } else {
            s.verdict = Verdict::one_time_growth;
        }
        ranked.push_back(id);
    }
    const auto before = [&](std::uint32_t x, std::uint32_t y) {
        const Counts& a = all[x];
        const Counts& b = all[y];
        const bool la = a.verdict == Verdict::leak, lb = b.verdict == Verdict::leak;
        if (la != lb) return la;
        if (la && a.leak_bytes_per_iteration != b.leak_bytes_per_iteration)
            return a.leak_bytes_per_iteration > b.leak_bytes_per_iteration;
        return a.live_bytes != b.live_bytes ? a.live_bytes > b.live_bytes : tally.site(x).site < tally.site(y).site;
    };
    out.sites_total = ranked.size();
    const std::size_t kept = std::min(limit, ranked.size());
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(kept), ranked.end(), before);
    for (auto id = ranked.begin() + static_cast<std::ptrdiff_t>(kept); id != ranked.end(); ++id) {
        out.sites_not_listed_bytes += all[*id].live_bytes;
        out.sites_not_listed_allocations += all[*id].live_allocations;
    }
    ranked.resize(kept);

    // The biggest stacks of the kept sites, up to three each.
    std::map<std::uint32_t, std::map<CanonStackId, std::pair<std::int64_t, std::int64_t>>> stacks;
    for (const auto id : ranked) stacks[id];
    for (std::size_t i = 0; i < r.allocations.size(); ++i) {
        const auto& a = r.allocations[i];
        if (a.free_event) continue;
        const auto at = stacks.find(tally.site_of(i));
        if (at == stacks.end()) continue;
        auto& st = at->second[index.stack(0, a.stack)];
        ++st.first;
        st.second += a.size;
    }
    const std::size_t listed_from = complete > kMaxIterationsListed ? complete - kMaxIterationsListed : 0;
    for (const auto id : ranked) {
        const auto& c = all[id];
        TraceSite s;
        static_cast<TraceCounts&>(s) = c;
        s.site = tally.site(id).site;
        s.category = tally.site(id).category;
        s.verdict = c.verdict;
        s.per_iteration_first = listed_from;
        s.per_iteration.assign(complete - listed_from, 0);
        for (std::size_t m = begin[id]; m < begin[id + 1]; ++m)
            if (made[m].iteration >= listed_from) ++s.per_iteration[made[m].iteration - listed_from];
        std::vector<std::pair<CanonStackId, std::pair<std::int64_t, std::int64_t>>> by_bytes(stacks[id].begin(),
                                                                                             stacks[id].end());
        std::stable_sort(by_bytes.begin(), by_bytes.end(),
                         [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
        for (std::size_t k = 3; k < by_bytes.size(); ++k)
            s.stacks_not_shown.add(by_bytes[k].second.first, by_bytes[k].second.second);
        for (std::size_t k = 0; k < by_bytes.size() && k < 3; ++k) {
            RepresentativeStack rs;
            rs.delta_blocks = by_bytes[k].second.first;
            rs.delta_bytes = by_bytes[k].second.second;
            rs.category = s.category;
            frames.add_frames(by_bytes[k].first, rs);
            s.stacks.push_back(std::move(rs));
        }
        s.rank = out.sites.size() + 1;
        out.sites.push_back(std::move(s));
    }
}

std::size_t sites_limit(const AnalysisOptions& options) {
    return options.top == 0 ? kMaxTraceSitesListed : std::min(options.top, kMaxTraceSitesListed);
}

// The stacks of the allocations live at the replay's peak (or at its end), for pictures.
StackProfile stacks_at(const Snapshot& snap, const Replay& r, StackIndex& index, const std::vector<bool>& temporaries,
                       bool at_peak) {
    const auto peak =
        static_cast<std::size_t>(std::max_element(r.allocated.begin(), r.allocated.end()) - r.allocated.begin());
    StackProfile out;
    out.subject =
        at_peak ? ProfileSubject{ProfileSubject::Kind::live_at_peak, snap.source.path, {}, r.allocated[peak], peak}
                : ProfileSubject{ProfileSubject::Kind::live_at_end, snap.source.path, {}, 0, 0};
    out.measure = "live bytes";
    StackTotals by_stack;
    for (std::size_t i = 0; i < r.allocations.size(); ++i) {
        const auto& a = r.allocations[i];
        if (at_peak ? !a.live_at(peak) : a.free_event.has_value()) continue;
        const auto category =
            !temporaries.empty() && temporaries[i] ? Category::temporary : index.category(0, a.stack, a.asked());
        auto& s = by_stack[{index.stack(0, a.stack), category}];
        s.first += a.size;
        ++s.second;
    }
    add_samples(out, index, by_stack);
    return out;
}

// torch <= 2.0 without a ring buffer: each block's history holds the allocation that lives
// in it, with its stack, but nothing says when. What is live can still be named by site.
TraceResult history_trace(TraceResult out, const Snapshot& snap, const AnalysisOptions& options,
                          const TraceOptions& trace_options) {
    out.source = "block history";
    out.iteration_source = IterationSource::none;
    StackIndex index({&snap}, options.rules, options.stacks);
    FrameTableBuilder frames(index, out.frame_table);
    Replay live(snap);  // no events: every allocation is live at the end
    for (const auto& b : snap.blocks) {
        if (!b.live() || snap.segments[b.segment].device != out.device || b.stack == snapshot::no_stack) continue;
        Allocation a;
        a.size = b.size;
        a.requested = b.requested_size;
        a.stack = b.stack;
        live.allocations.push_back(a);
    }
    out.events = live.allocations.size();
    if (live.allocations.empty())
        throw input_error(fmt::format("the capture holds no trace events and no block history of live allocations "
                                      "for device {}",
                                      out.device),
                          snap.source.path);
    const SiteTally tally(live.allocations, index);
    live_sites(live, tally, detail::Iterations{}, index, frames, sites_limit(options), out);
    out.notes.push_back(Fact(FactKind::block_history_only));
    if (trace_options.stacks != TraceOptions::Stacks::none) out.stacks = live_stacks(snap, options);
    return out;
}

}  // namespace

namespace {

// An OOM after iterations that each kept memory: how much of what was live they kept.
void add_leak_evidence(std::vector<OomExplanation>& ooms, const std::vector<TraceSite>& sites) {
    for (auto& oom : ooms)
        for (const auto& s : sites) {
            if (s.verdict != Verdict::leak) continue;
            for (const auto& live : oom.usage.sites)
                if (live.site == s.site)
                    oom.evidence.push_back(Fact(FactKind::oom_leak_site)
                                               .text("site", s.site.label())
                                               .count("allocations", s.leak_allocations_per_iteration)
                                               .bytes("bytes", s.leak_bytes_per_iteration)
                                               .bytes("held", live.bytes)
                                               .count("held_allocations", live.allocations));
        }
}

// Out-of-memory events on the devices the trace does not show: named in its first lines.
Facts ooms_elsewhere(const Snapshot& snap, int shown) {
    std::map<int, std::int64_t> by_device;
    for (const auto& e : snap.events)
        if (e.action() == TraceAction::oom && e.device != shown) ++by_device[e.device];
    Facts out;
    for (const auto& [device, events] : by_device)
        out.push_back(Fact(FactKind::oom_elsewhere).count("device", device).count("events", events));
    return out;
}

Facts trace_notes(const TraceResult& out, const detail::Iterations& it) {
    Facts notes;
    if (out.ooms_total > out.ooms.size())
        notes.push_back(Fact(FactKind::ooms_more)
                            .count("total", static_cast<std::int64_t>(out.ooms_total))
                            .count("explained", static_cast<std::int64_t>(out.ooms.size())));
    if (it.complete() > kMaxIterationsListed)
        notes.push_back(Fact(FactKind::iterations_many)
                            .count("iterations", static_cast<std::int64_t>(it.complete()))
                            .count("listed", static_cast<std::int64_t>(kMaxIterationsListed)));
    if (out.truncated && it.judged()) notes.push_back(Fact(FactKind::truncated_warmup));
    if (it.note) notes.push_back(*it.note);
    return notes;
}

void replay_into(TraceResult& out, const detail::Replay& r) {
    out.events = r.events.size();
    out.time_first_us = r.events.front().time_us;
    out.time_last_us = r.events.back().time_us;
    out.recorded = r.recorded;
    out.truncated = r.truncated;
    out.started_late = r.started_late;
    out.start_unseen = r.start_unseen;
    for (const auto& a : r.allocations)
        if (!a.alloc_event && !a.free_event) {
            ++out.live_before_trace_blocks;
            out.live_before_trace_bytes += a.size;
            out.live_before_trace_with_stack += a.stack != snapshot::no_stack;
        }
    out.truncation_evidence = r.truncation_evidence;
    out.disagreements = r.disagreements;
}

void timeline_into(TraceResult& out, const detail::Replay& r, const detail::Iterations& it, std::size_t peak) {
    // Iteration starts are marked while they fit in the timeline's points.
    std::vector<std::size_t> marks;
    if (it.starts.size() <= kMaxTimelinePoints / 2) marks = it.starts;
    for (const auto& o : out.ooms) marks.push_back(o.event);
    for (std::size_t k = 0; k < out.snapshot_events.size() && k < kMaxTimelinePoints / 4; ++k)
        marks.push_back(out.snapshot_events[k]);
    out.timeline = timeline(r, peak, marks);
    for (std::size_t k = 0; k < it.complete(); ++k)
        out.allocated_by_iteration.push_back(
            *std::max_element(r.allocated.begin() + static_cast<std::ptrdiff_t>(it.starts[k]),
                              r.allocated.begin() + static_cast<std::ptrdiff_t>(it.starts[k + 1]) + 1));
}

}  // namespace

namespace {

// Why a capture has nothing to replay, and what to record instead: said by the kind of capture.
std::string no_trace_message(const snapshot::Snapshot& snap) {
    if (snap.segments_only)
        return "the capture is a segment list (torch.cuda.memory_snapshot()), which holds no trace: record with "
               "torch.cuda.memory._record_memory_history() and write the capture with "
               "torch.cuda.memory._dump_snapshot()";
    const bool stacks = std::any_of(snap.blocks.begin(), snap.blocks.end(),
                                    [](const snapshot::Block& b) { return b.stack != snapshot::no_stack; });
    if (stacks)
        return "the capture's trace is empty although its blocks carry stacks: the trace was recorded without "
               "events (_record_memory_history(enabled=\"state\")) or its ring buffer was cleared; record with "
               "enabled=\"all\" and a max_entries that holds a step";
    return "the capture holds no trace events: record them with torch.cuda.memory._record_memory_history() before "
           "taking the snapshot";
}

}  // namespace

TraceResult analyze_trace(const Snapshot& snap, const AnalysisOptions& options, const TraceOptions& trace_options) {
    TraceResult out;
    out.file = snap.source.path;
    out.generation = snap.source.generation;
    out.device = pick_device(snap, options.device);
    std::set<int> traced;
    for (const auto& e : snap.events) traced.insert(e.device);
    out.devices.assign(traced.begin(), traced.end());
    out.headline = ooms_elsewhere(snap, out.device);

    if (out.devices.empty()) {
        if (!snap.has_history) throw input_error(no_trace_message(snap), snap.source.path);
        return history_trace(std::move(out), snap, options, trace_options);
    }

    const auto r = detail::replay(snap, out.device);
    if (r.events.empty())
        throw input_error(fmt::format("the capture holds no trace events for device {}", out.device), snap.source.path);
    replay_into(out, r);

    StackIndex index({&snap}, options.rules, options.stacks);
    FrameTableBuilder frames(index, out.frame_table);
    const auto temporaries = detail::step_temporaries(r, index);
    const SiteTally tally(r.allocations, index, temporaries);

    const auto it = detail::find_iterations(snap, r, out.device, index);
    out.iterations = it.complete();
    out.iteration_source = it.source;
    out.iterations_judged = it.judged();
    out.iteration_starts = it.starts;
    for (std::size_t i = 0; i < r.events.size(); ++i)
        if (r.events[i].action() == TraceAction::snapshot) out.snapshot_events.push_back(i);
    // A position past the last event (the end) takes the last event's time, as the timeline does.
    const auto time_at = [&r](std::size_t i) { return r.events[std::min(i, r.events.size() - 1)].time_us; };
    for (const auto i : out.iteration_starts) out.iteration_start_times_us.push_back(time_at(i));
    for (const auto i : out.snapshot_events) out.snapshot_times_us.push_back(time_at(i));

    const auto peak =
        static_cast<std::size_t>(std::max_element(r.allocated.begin(), r.allocated.end()) - r.allocated.begin());
    out.peak.bytes = r.allocated[peak];
    out.peak.device = out.device;
    out.peak.event = peak;
    out.peak.time_us = r.events.empty() ? -1 : r.events.time_before(peak);
    out.peak.usage = tally.usage([peak](const Allocation& a) { return a.live_at(peak); }, options.top);

    if (trace_options.stacks != TraceOptions::Stacks::none)
        out.stacks = stacks_at(snap, r, index, temporaries, trace_options.stacks == TraceOptions::Stacks::peak);
    out.ooms =
        ooms_of(snap, r, out.device, index, tally, frames, options, trace_options, kMaxOomsExplained, out.ooms_total);
    live_sites(r, tally, it, index, frames, sites_limit(options), out);
    add_leak_evidence(out.ooms, out.sites);
    timeline_into(out, r, it, peak);
    out.notes = trace_notes(out, it);
    if (r.larger_blocks > 0)
        out.notes.push_back(
            Fact(FactKind::larger_blocks).count("allocations", r.larger_blocks).bytes("bytes", r.larger_by_bytes));
    return out;
}

int default_trace_device(const Snapshot& snap) {
    const auto& trace = snap.events;
    for (std::size_t i = 0; i < trace.size(); ++i)
        if (trace.action_at(i) == TraceAction::oom) return trace.device_at(i);  // the first OOM's device
    std::map<int, std::int64_t> reserved;
    for (const auto& seg : snap.segments) reserved[seg.device] += seg.total_size;
    if (!reserved.empty())
        return std::max_element(reserved.begin(), reserved.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; })
            ->first;
    std::map<int, std::int64_t> events;
    for (std::size_t i = 0; i < trace.size(); ++i) ++events[trace.device_at(i)];
    if (!events.empty())
        return std::max_element(events.begin(), events.end(),
                                [](const auto& a, const auto& b) { return a.second < b.second; })
            ->first;
    throw input_error("the capture holds no segments and no trace events: nothing to replay", snap.source.path);
}

std::string_view to_string(IterationSource source) {
    switch (source) {
        case IterationSource::none:
            return "none";
        case IterationSource::profiler_step:
            return "annotations: ProfilerStep";
        case IterationSource::optimizer_step:
            return "annotations: Optimizer.step";
        case IterationSource::user_steps:
            return "annotations: user steps";
        case IterationSource::loop:
            return "repeating allocations";
    }
    return "none";
}

OomReport explain_ooms(const Snapshot& snap, const AnalysisOptions& options, const TraceOptions& trace_options) {
    OomReport out;
    std::set<int> devices;
    for (const auto& e : snap.events)
        if (e.action() == TraceAction::oom && (!options.device || e.device == *options.device))
            devices.insert(e.device);
    if (devices.empty()) return out;
    StackIndex index({&snap}, options.rules, options.stacks);
    FrameTableBuilder frames(index, out.frame_table);
    for (const int device : devices) {
        const auto r = detail::replay(snap, device);
        const SiteTally tally(r.allocations, index, detail::step_temporaries(r, index));
        const std::size_t room = kMaxOomsExplained - std::min(kMaxOomsExplained, out.ooms.size());
        for (auto& o : ooms_of(snap, r, device, index, tally, frames, options, trace_options, room, out.ooms_total))
            out.ooms.push_back(std::move(o));
    }
    return out;
}

}  // namespace memsnap::analysis

namespace memsnap::analysis {

std::optional<Peak> trace_peak(const Snapshot& snap, const AnalysisOptions& options) {
    if (snap.events.empty()) return std::nullopt;
    const int device = pick_device(snap, options.device);
    const auto moment = detail::peak_moment(snap, device);
    if (!moment) return std::nullopt;
    // One moment: only what is live then needs a site (a long trace's allocations are mostly
    // freed long before or made long after).
    StackIndex index({&snap}, options.rules, options.stacks);
    const SiteTally tally(moment->live, index,
                          detail::step_temporaries_at(snap, device, moment->at, moment->live, index));
    Peak peak;
    peak.bytes = moment->allocated;
    peak.device = device;
    peak.event = moment->at;
    peak.time_us = moment->time_us;
    peak.usage = tally.usage([](const Allocation&) { return true; }, options.top == 0 ? 10 : options.top);
    peak.not_in_snapshot = static_cast<std::int64_t>(moment->not_in_snapshot);
    peak.not_in_snapshot_bytes = moment->not_in_snapshot_bytes;
    return peak;
}

std::map<int, std::int64_t> ooms_by_device(const Snapshot& snap) {
    std::map<int, std::int64_t> out;
    const auto& trace = snap.events;
    for (std::size_t i = 0; i < trace.size(); ++i)
        if (trace.action_at(i) == TraceAction::oom) ++out[trace.device_at(i)];
    return out;
}

StackProfile trace_stacks(const Snapshot& snap, const AnalysisOptions& options, bool at_peak) {
    const int device = pick_device(snap, options.device);
    const auto r = detail::replay(snap, device);
    // Block history without trace events: what is live is all there is.
    if (r.events.empty()) return live_stacks(snap, options);
    StackIndex index({&snap}, options.rules, options.stacks);
    return stacks_at(snap, r, index, detail::step_temporaries(r, index), at_peak);
}

}  // namespace memsnap::analysis
