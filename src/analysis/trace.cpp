#include "trace_iterations.hpp"
#include "trace_oom.hpp"
#include "trace_replay.hpp"

#include <memsnap/analysis/rank.hpp>
#include <memsnap/analysis/stack_index.hpp>
#include <memsnap/analysis/totals.hpp>
#include <memsnap/analysis/trace.hpp>
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
using snapshot::Snapshot;
using snapshot::TraceAction;

// The device to replay: --device, else the lowest device with trace events.
int pick_device(const Snapshot& snap, std::optional<int> wanted) {
    std::set<int> traced;
    for (const auto& e : snap.events) traced.insert(e.device);
    if (wanted) {
        if (!traced.count(*wanted) && !devices_of(snap).count(*wanted)) require_device(snap, wanted);
        return *wanted;
    }
    if (traced.empty())
        throw input_error("the capture holds no trace events: record them with "
                          "torch.cuda.memory._record_memory_history() before taking the snapshot",
                          snap.source.path);
    return *traced.begin();
}

// Sites and categories of the allocations live just before event `moment` (or selected by
// `keep`), by bytes.
class SiteTally {
public:
    SiteTally(const Snapshot& snap, StackIndex& index) : snap_(snap), index_(index) {}

    template <class Keep>
    MomentUsage usage(const std::vector<Allocation>& allocations, Keep&& keep, std::size_t top) {
        MomentUsage out;
        std::map<std::pair<std::uint64_t, Category>, std::size_t> position;
        for (const auto& a : allocations) {
            if (!keep(a)) continue;
            const auto canon = index_.stack(0, a.stack);
            const auto category = index_.category(0, a.stack);
            out.category_bytes[static_cast<std::size_t>(category)] += a.size;
            const auto [at, added] = position.try_emplace({index_.site_token(canon), category}, out.sites.size());
            if (added) {
                LiveSite s;
                s.site = index_.site(canon);
                s.site.category = category;
                s.category = category;
                out.sites.push_back(std::move(s));
            }
            out.sites[at->second].bytes += a.size;
            ++out.sites[at->second].allocations;
        }
        std::sort(out.sites.begin(), out.sites.end(), [](const LiveSite& a, const LiveSite& b) {
            return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
        });
        if (top != 0 && out.sites.size() > top) out.sites.resize(top);
        for (std::size_t i = 0; i < out.sites.size(); ++i) out.sites[i].rank = i + 1;
        return out;
    }

private:
    const Snapshot& snap_;
    StackIndex& index_;
};

// At most kMaxPoints points of the timeline, evenly spaced, with the peak and `marks` kept.
std::vector<TimelinePoint> timeline(const Replay& r, std::size_t peak, const std::vector<std::size_t>& marks) {
    constexpr std::size_t kMaxPoints = 1000;
    const std::size_t n = r.events.size();
    std::set<std::size_t> keep(marks.begin(), marks.end());
    keep.insert(peak);
    keep.insert(n);
    const std::size_t step = std::max<std::size_t>(1, (n + kMaxPoints - 1) / kMaxPoints);
    for (std::size_t i = 0; i <= n; i += step) keep.insert(i);
    std::vector<TimelinePoint> out;
    for (const std::size_t i : keep) {
        const std::int64_t time = i < n ? r.events[i]->time_us : (n ? r.events[n - 1]->time_us : -1);
        out.push_back({i, time, r.allocated[i], r.reserved[i]});
    }
    return out;
}

std::optional<FrameText> user_frame(const StackIndex& index, CanonStackId stack) {
    for (const auto f : index.frames(stack))
        if (index.flags(f).user) return index.frame(f);
    return std::nullopt;
}

std::vector<OomExplanation> ooms_of(const Snapshot& snap, const Replay& r, int device, StackIndex& index,
                                    SiteTally& tally, FrameTableBuilder& frames, const AnalysisOptions& options,
                                    const TraceOptions& trace_options) {
    std::vector<OomExplanation> out;
    for (std::size_t i = 0; i < r.events.size(); ++i) {
        const auto& e = *r.events[i];
        if (e.action != TraceAction::oom) continue;
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
        oom.stack.category = index.category(0, e.stack);
        frames.add_frames(canon, oom.stack);
        oom.usage = tally.usage(r.allocations, [i](const Allocation& a) { return a.live_at(i); }, options.top);
        detail::classify_oom(oom);
        out.push_back(std::move(oom));
    }
    return out;
}

// The allocations live at the end, by site, with what each iteration left.
std::vector<TraceSite> live_sites(const Replay& r, const detail::Iterations& it, StackIndex& index,
                                  FrameTableBuilder& frames) {
    struct Group {
        TraceSite site;
        std::map<CanonStackId, std::pair<std::int64_t, std::int64_t>> stacks;  // -> (allocations, bytes)
        std::vector<std::int64_t> bytes_per_iteration;
    };
    std::map<std::pair<std::uint64_t, Category>, Group> groups;
    const std::size_t complete = it.complete();
    for (const auto& a : r.allocations) {
        if (a.free_event) continue;
        const auto canon = index.stack(0, a.stack);
        const auto category = index.category(0, a.stack);
        auto& g = groups[{index.site_token(canon), category}];
        if (g.site.live_allocations == 0) {
            g.site.site = index.site(canon);
            g.site.site.category = category;
            g.site.category = category;
            g.site.per_iteration.assign(complete, 0);
            g.bytes_per_iteration.assign(complete, 0);
        }
        ++g.site.live_allocations;
        g.site.live_bytes += a.size;
        auto& s = g.stacks[canon];
        ++s.first;
        s.second += a.size;
        const long k = a.alloc_event && !it.starts.empty() ? it.index_of(*a.alloc_event) : -1;
        if (k < 0) {
            ++g.site.warmup_allocations;
        } else if (static_cast<std::size_t>(k) < complete) {
            ++g.site.per_iteration[static_cast<std::size_t>(k)];
            g.bytes_per_iteration[static_cast<std::size_t>(k)] += a.size;
        } else {
            ++g.site.current_allocations;
        }
    }
    std::vector<TraceSite> out;
    for (auto& [key, g] : groups) {
        auto& s = g.site;
        const auto& per = s.per_iteration;
        // The same number every iteration (after the first, when there are three or more:
        // the first may hold one-time growth).
        const std::size_t from = per.size() >= 3 ? 1 : 0;
        const bool steady = per.size() >= 2 && per[from] > 0 &&
                            std::all_of(per.begin() + static_cast<std::ptrdiff_t>(from), per.end(),
                                        [&](std::int64_t c) { return c == per[from]; });
        if (steady) {
            s.verdict = "leak";
            s.leak_allocations_per_iteration = per[from];
            std::int64_t bytes = 0;
            for (std::size_t k = from; k < per.size(); ++k) bytes += g.bytes_per_iteration[k];
            s.leak_bytes_per_iteration = bytes / static_cast<std::int64_t>(per.size() - from);
        } else if (it.starts.empty()) {
            s.verdict = "live";
        } else if (std::all_of(per.begin(), per.end(), [](std::int64_t c) { return c == 0; })) {
            s.verdict = s.current_allocations > 0 ? "current" : "warmup";
        } else {
            s.verdict = "one_time";
        }
        // The biggest stacks, up to three.
        std::vector<std::pair<CanonStackId, std::pair<std::int64_t, std::int64_t>>> stacks(g.stacks.begin(),
                                                                                          g.stacks.end());
        std::stable_sort(stacks.begin(), stacks.end(),
                         [](const auto& a, const auto& b) { return a.second.second > b.second.second; });
        for (std::size_t k = 0; k < stacks.size() && k < 3; ++k) {
            RepresentativeStack rs;
            rs.delta_blocks = stacks[k].second.first;
            rs.delta_bytes = stacks[k].second.second;
            rs.category = s.category;
            frames.add_frames(stacks[k].first, rs);
            s.stacks.push_back(std::move(rs));
        }
        out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](const TraceSite& a, const TraceSite& b) {
        const bool la = a.verdict == "leak", lb = b.verdict == "leak";
        if (la != lb) return la;
        if (la && a.leak_bytes_per_iteration != b.leak_bytes_per_iteration)
            return a.leak_bytes_per_iteration > b.leak_bytes_per_iteration;
        return a.live_bytes != b.live_bytes ? a.live_bytes > b.live_bytes : a.site < b.site;
    });
    for (std::size_t i = 0; i < out.size(); ++i) out[i].rank = i + 1;
    return out;
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

    const auto r = detail::replay(snap, out.device);
    out.events = r.events.size();
    if (r.events.empty())
        throw input_error(fmt::format("the capture holds no trace events for device {}", out.device), snap.source.path);
    out.time_first_us = r.events.front()->time_us;
    out.time_last_us = r.events.back()->time_us;
    out.truncated = r.truncated;
    out.truncation_evidence = r.truncation_evidence;
    out.disagreements = r.disagreements;

    StackIndex index({&snap}, options.rules, options.stacks);
    SiteTally tally(snap, index);
    FrameTableBuilder frames(index, out.frame_table);

    const auto it = detail::find_iterations(snap, r, out.device);
    out.iterations = it.complete();
    out.iteration_source = it.source;
    out.iteration_starts = it.starts;

    const auto peak = static_cast<std::size_t>(
        std::max_element(r.allocated.begin(), r.allocated.end()) - r.allocated.begin());
    out.peak.bytes = r.allocated[peak];
    out.peak.event = peak;
    out.peak.time_us = peak < r.events.size() ? r.events[peak]->time_us : out.time_last_us;
    out.peak.usage = tally.usage(r.allocations, [peak](const Allocation& a) { return a.live_at(peak); }, options.top);

    out.ooms = ooms_of(snap, r, out.device, index, tally, frames, options, trace_options);
    auto sites = live_sites(r, it, index, frames);
    // An OOM after iterations that each kept memory: say how much of what was live they kept.
    for (auto& oom : out.ooms)
        for (const auto& s : sites) {
            if (s.verdict != "leak") continue;
            for (const auto& live : oom.usage.sites)
                if (live.site == s.site)
                    oom.evidence.push_back(fmt::format(
                        "{} keeps {} allocation(s) ({}) every iteration and held {} in {} allocation(s) at that "
                        "moment: a leak (see the live sites)",
                        s.site.label(), s.leak_allocations_per_iteration, util::human_bytes(s.leak_bytes_per_iteration),
                        util::human_bytes(live.bytes), live.allocations));
        }
    out.sites_total = sites.size();
    if (options.top != 0 && sites.size() > options.top) sites.resize(options.top);
    out.sites = std::move(sites);

    std::vector<std::size_t> marks = it.starts;
    for (const auto& o : out.ooms) marks.push_back(o.event);
    out.timeline = timeline(r, peak, marks);
    for (std::size_t k = 0; k < it.complete(); ++k)
        out.allocated_by_iteration.push_back(*std::max_element(r.allocated.begin() + static_cast<std::ptrdiff_t>(it.starts[k]),
                                                               r.allocated.begin() + static_cast<std::ptrdiff_t>(it.starts[k + 1]) + 1));

    if (out.truncated)
        out.notes.push_back("the ring buffer was truncated: allocations made before its first entry count as warmup, "
                            "and the timeline starts at its first entry");
    if (!it.note.empty()) out.notes.push_back(it.note);
    if (it.starts.empty())
        out.notes.push_back(it.note.empty() ? "no iterations found (no ProfilerStep or Optimizer.step annotations, no "
                                              "repeating allocations): live allocations cannot be judged per iteration"
                                            : "without iterations, live allocations cannot be judged per iteration");
    return out;
}

OomReport explain_ooms(const Snapshot& snap, const AnalysisOptions& options, const TraceOptions& trace_options) {
    OomReport out;
    std::set<int> devices;
    for (const auto& e : snap.events)
        if (e.action == TraceAction::oom && (!options.device || e.device == *options.device)) devices.insert(e.device);
    if (devices.empty()) return out;
    StackIndex index({&snap}, options.rules, options.stacks);
    SiteTally tally(snap, index);
    FrameTableBuilder frames(index, out.frame_table);
    for (const int device : devices) {
        const auto r = detail::replay(snap, device);
        for (auto& o : ooms_of(snap, r, device, index, tally, frames, options, trace_options))
            out.ooms.push_back(std::move(o));
    }
    return out;
}

}  // namespace memsnap::analysis
