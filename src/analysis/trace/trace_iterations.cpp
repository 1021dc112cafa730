#include "trace_iterations.hpp"

#include <memsnap/util/hash.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace memsnap::analysis::detail {

using snapshot::TraceAction;

long Iterations::index_of(std::size_t position) const {
    const auto it = std::upper_bound(starts.begin(), starts.end(), position);
    return static_cast<long>(it - starts.begin()) - 1;
}

namespace {

// The first event at or after `time_us`.
std::size_t position_at(const Replay& r, std::int64_t time_us) { return r.events.first_at(time_us); }

std::vector<std::size_t> from_annotations(const snapshot::Snapshot& snap, const Replay& r, int device,
                                          std::string_view name_part, std::string_view stage, bool after) {
    std::vector<std::size_t> out;
    for (const auto& a : snap.annotations) {
        if (a.device != device || a.time_us < 0) continue;
        if (snap.str(a.name).find(name_part) == std::string_view::npos || snap.str(a.stage) != stage) continue;
        // An Optimizer.step that ends at time t: the next iteration begins after t.
        out.push_back(position_at(r, after ? a.time_us + 1 : a.time_us));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// A key whose occurrences cut the allocations into identical runs: the boundaries of a loop
// that does the same work every time.
std::vector<std::size_t> from_repetition(const Replay& r) {
    struct Key {
        std::uint32_t stack;
        std::int64_t size;
        bool operator==(const Key&) const = default;
    };
    std::vector<Key> keys;
    std::vector<std::size_t> positions;  // event position of each alloc
    for (std::size_t i = 0; i < r.events.size(); ++i)
        if (r.events[i].action() == TraceAction::alloc) {
            keys.push_back({r.events[i].stack.value, r.events[i].size});
            positions.push_back(i);
        }
    std::unordered_map<std::uint64_t, std::vector<std::size_t>, util::SeededIntHash> where;  // key -> alloc indices
    for (std::size_t k = 0; k < keys.size(); ++k)
        where[util::mix_hash(keys[k].stack, static_cast<std::uint64_t>(keys[k].size))].push_back(k);
    std::vector<const std::vector<std::size_t>*> candidates;
    for (const auto& [hash, list] : where)
        if (list.size() >= 3) candidates.push_back(&list);
    // The most frequent keys first; a loop's first allocation is among them.
    std::sort(candidates.begin(), candidates.end(), [](const auto* a, const auto* b) {
        return a->size() != b->size() ? a->size() > b->size() : a->front() < b->front();
    });
    if (candidates.size() > 16) candidates.resize(16);
    std::vector<std::size_t> best;
    for (const auto* list : candidates) {
        const auto& at = *list;
        // Identical runs between consecutive occurrences, as many as follow one another.
        std::size_t run_start = 0, best_here = 0, best_start = 0;
        for (std::size_t j = 1; j + 1 < at.size(); ++j) {
            const std::size_t a = at[j - 1], b = at[j], c = at[j + 1];
            const bool same = c - b == b - a && std::equal(keys.begin() + static_cast<std::ptrdiff_t>(a),
                                                           keys.begin() + static_cast<std::ptrdiff_t>(b),
                                                           keys.begin() + static_cast<std::ptrdiff_t>(b));
            if (!same) {
                run_start = j;
                continue;
            }
            if (j + 1 - run_start > best_here) {
                best_here = j + 1 - run_start;
                best_start = run_start;
            }
        }
        if (best_here + 1 < 3 || best_here + 1 <= best.size()) continue;  // three boundaries at least
        best.clear();
        for (std::size_t j = best_start; j <= best_start + best_here; ++j) best.push_back(positions[at[j]]);
    }
    return best;
}

// A training loop frees what an iteration made before the next begins, so memory returns
// near where it was: what an iteration keeps is small next to what it uses. The layers of
// one forward pass also repeat, but keep their activations: memory climbs with each.
bool returns_between(const Replay& r, const std::vector<std::size_t>& starts) {
    std::vector<double> kept;
    for (std::size_t k = 0; k + 1 < starts.size(); ++k) {
        const auto begin = r.allocated.begin() + static_cast<std::ptrdiff_t>(starts[k]);
        const auto end = r.allocated.begin() + static_cast<std::ptrdiff_t>(starts[k + 1]);
        const std::int64_t swing = *std::max_element(begin, end + 1) - *begin;
        const std::int64_t net = *end - *begin;
        kept.push_back(swing <= 0 ? 1.0 : static_cast<double>(net) / static_cast<double>(swing));
    }
    std::sort(kept.begin(), kept.end());
    return !kept.empty() && kept[kept.size() / 2] < 0.5;
}

}  // namespace

Iterations find_iterations(const snapshot::Snapshot& snap, const Replay& r, int device) {
    Iterations out;
    auto steps = from_annotations(snap, r, device, "ProfilerStep#", "START", false);
    // The end of the last step closes it: a loop of N steps is N iterations.
    if (const auto ends = from_annotations(snap, r, device, "ProfilerStep#", "END", true);
        !steps.empty() && !ends.empty() && ends.back() > steps.back())
        steps.push_back(ends.back());
    if (steps.size() >= 2) {
        out.starts = std::move(steps);
        out.source = "annotations: ProfilerStep";
    } else if (auto ends = from_annotations(snap, r, device, "Optimizer.step", "END", true); ends.size() >= 2) {
        out.starts = std::move(ends);
        out.source = "annotations: Optimizer.step";
    } else if (auto repeated = from_repetition(r); !repeated.empty() && returns_between(r, repeated)) {
        out.starts = std::move(repeated);
        out.source = "repeating allocations";
    } else {
        out.source = "none";
        if (!repeated.empty())
            out.note = fmt::format(
                "a sequence of allocations repeats {} times, but memory does not come back down "
                "between repeats (like the layers of one forward pass): not taken for iterations",
                repeated.size() - 1);
    }
    return out;
}

}  // namespace memsnap::analysis::detail
