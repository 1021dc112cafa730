#include "step_temporaries.hpp"

#include <algorithm>
#include <unordered_map>

namespace memsnap::analysis::detail {

namespace {

using snapshot::TraceAction;

bool in_step(StackIndex& index, snapshot::StackId stack) {
    return index.category(0, stack) == Category::optimizer_state;
}

bool outside_step(StackIndex& index, const snapshot::TraceEvent& e) {
    return e.action() == TraceAction::alloc && !in_step(index, e.stack);
}

}  // namespace

std::vector<bool> step_temporaries(const Replay& r, StackIndex& index) {
    // The candidates, by alloc event: then each event is read once on the way to the first
    // allocation outside a step after each of them.
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < r.allocations.size(); ++i) {
        const auto& a = r.allocations[i];
        if (a.alloc_event && a.free_event && in_step(index, a.stack)) candidates.push_back(i);
    }
    if (candidates.empty()) return {};
    std::sort(candidates.begin(), candidates.end(), [&](std::size_t x, std::size_t y) {
        return *r.allocations[x].alloc_event < *r.allocations[y].alloc_event;
    });
    std::vector<bool> out(r.allocations.size(), false);
    std::size_t next_outside = 0;  // the first allocation outside a step after the last candidate's alloc
    bool any = false;
    for (const auto i : candidates) {
        const auto& a = r.allocations[i];
        if (next_outside <= *a.alloc_event) {
            next_outside = *a.alloc_event + 1;
            while (next_outside < r.events.size() && !outside_step(index, r.events[next_outside])) ++next_outside;
        }
        if (*a.free_event < next_outside) out[i] = any = true;
    }
    if (!any) return {};
    return out;
}

std::vector<bool> step_temporaries_at(const snapshot::Snapshot& snap, int device, std::size_t moment,
                                      const std::vector<Allocation>& live, StackIndex& index) {
    // Made in the step under way at `moment`: after the last allocation outside a step.
    std::size_t earliest = moment;
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < live.size(); ++i)
        if (live[i].alloc_event && in_step(index, live[i].stack)) {
            candidates.push_back(i);
            earliest = std::min(earliest, *live[i].alloc_event);
        }
    if (candidates.empty()) return {};
    const auto events = events_of(snap, device);  // only now: most peaks hold no step's allocations
    std::size_t step_begin = moment;              // the first event after the last allocation outside a step
    while (step_begin > earliest && !outside_step(index, events[step_begin - 1])) --step_begin;
    std::unordered_map<std::int64_t, std::size_t> by_address;  // each address is live once
    for (const auto i : candidates)
        if (*live[i].alloc_event >= step_begin) by_address.emplace(live[i].address, i);
    if (by_address.empty()) return {};
    std::vector<bool> out(live.size(), false);
    bool any = false;
    for (std::size_t k = moment; k < events.size() && !by_address.empty(); ++k) {
        const auto e = events[k];
        if (outside_step(index, e)) break;
        if (e.action() != TraceAction::free_completed) continue;
        if (const auto at = by_address.find(e.addr); at != by_address.end()) {
            out[at->second] = any = true;
            by_address.erase(at);
        }
    }
    if (!any) return {};
    return out;
}

}  // namespace memsnap::analysis::detail
