#include "trace_iterations.hpp"

#include <memsnap/util/hash.hpp>
#include <memsnap/util/pattern.hpp>

#include <algorithm>
#include <set>
#include <unordered_map>

namespace memsnap::analysis::detail {

using snapshot::TraceAction;

long Iterations::index_of(std::size_t position) const {
    const auto it = std::upper_bound(starts.begin(), starts.end(), position);
    return static_cast<long>(it - starts.begin()) - 1;
}

namespace {

// A user's record_function name that numbers a step; compiler phases and zero_grad are not.
bool user_step(std::string_view name) {
    static const util::Pattern step(R"((^|[^a-z])(step|iter|iteration|epoch_step)[ _#:=-]*[0-9]+)", "step annotation",
                                    true);
    static const util::Pattern not_step(R"(zero_grad|dynamo|inductor|compile|Optimizer\.|ProfilerStep)",
                                        "step annotation", true);
    return step.search(name) && !not_step.search(name);
}

enum class Family { profiler, optimizer, user };

bool in_family(std::string_view name, Family family) {
    switch (family) {
        case Family::profiler:
            return name.starts_with("ProfilerStep#");
        case Family::optimizer:
            return name.starts_with("Optimizer.step#");
        case Family::user:
            return user_step(name);
    }
    return false;
}

// The STARTs of one family's annotations, and the END of the last one where an annotation
// spans a whole iteration. Optimizer.step spans the optimizer's step alone: from one START to
// the next is an iteration (the forward and backward between them), but from the last START
// to its END is one step of the optimizer, no iteration (one START makes none).
std::vector<std::size_t> from_annotations(const snapshot::Snapshot& snap, const Replay& r, int device, Family family) {
    const bool spans_iteration = family != Family::optimizer;
    std::vector<std::size_t> starts;
    std::optional<std::int64_t> last_end;
    for (const auto& a : snap.annotations) {
        if (a.device != device || a.time_us < 0 || !in_family(snap.str(a.name), family)) continue;
        const auto stage = snap.str(a.stage);
        if (stage == "START") starts.push_back(r.events.first_at(a.time_us));
        if (stage == "END") last_end = std::max(last_end.value_or(a.time_us), a.time_us);
    }
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    if (spans_iteration && !starts.empty() && last_end) {
        const std::size_t end = r.events.first_at(*last_end + 1);
        if (end > starts.back()) starts.push_back(end);
    }
    return starts;
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

// Whether one period of a repetition runs through the whole body of a user function called in
// a loop at the outermost user frames: the frames all its allocations share (from the outside)
// hold at most two user frames, and inside them the allocations pass through two user frames or
// more (the body's lines). Layers of one forward pass share deeper frames; a per-parameter
// loop and autotuning pass through no user frame inside what they share.
bool loop_body(const Replay& r, std::size_t begin, std::size_t end, StackIndex& index) {
    std::vector<CanonFrameId> common;  // outermost first
    bool first = true;
    std::vector<std::span<const CanonFrameId>> stacks;
    for (std::size_t i = begin; i < end; ++i) {
        const auto e = r.events[i];
        if (e.action() != TraceAction::alloc) continue;
        const auto frames = index.frames(index.stack(0, e.stack));
        if (frames.empty()) continue;
        stacks.push_back(frames);
        if (first) {
            common.assign(frames.rbegin(), frames.rend());
            first = false;
            continue;
        }
        std::size_t k = 0;
        while (k < common.size() && k < frames.size() && common[k] == frames[frames.size() - 1 - k]) ++k;
        common.resize(k);
    }
    if (stacks.size() < 2 || common.empty()) return false;
    std::size_t shared_user = 0;
    for (const auto f : common) shared_user += index.flags(f).user;
    if (shared_user == 0 || shared_user > 2) return false;
    std::set<std::uint32_t> inside;  // the user frames right inside what the period shares
    for (const auto& frames : stacks)
        for (std::size_t k = common.size(); k < frames.size(); ++k) {
            const auto f = frames[frames.size() - 1 - k];
            if (index.flags(f).user) {
                inside.insert(f.value);
                break;
            }
        }
    return inside.size() >= 2;
}

// A training loop frees what an iteration made before the next begins, so memory returns near
// where it was: what an iteration keeps is small next to what it uses.
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

bool a_loop(const Replay& r, const std::vector<std::size_t>& starts, StackIndex& index) {
    if (starts.size() < 3) return false;
    // The periods cover most of the trace.
    if ((starts.back() - starts.front()) * 2 < r.events.size()) return false;
    for (std::size_t k = 0; k + 1 < starts.size(); ++k)
        if (!loop_body(r, starts[k], starts[k + 1], index)) return false;
    return returns_between(r, starts);
}

}  // namespace

Iterations find_iterations(const snapshot::Snapshot& snap, const Replay& r, int device, StackIndex& index) {
    Iterations out;
    const std::pair<Family, IterationSource> families[] = {{Family::profiler, IterationSource::profiler_step},
                                                           {Family::optimizer, IterationSource::optimizer_step},
                                                           {Family::user, IterationSource::user_steps}};
    for (const auto& [family, source] : families) {
        auto starts = from_annotations(snap, r, device, family);
        if (starts.empty()) continue;
        out.starts = std::move(starts);
        out.source = source;
        break;
    }
    if (out.source == IterationSource::none) {
        auto repeated = from_repetition(r);
        if (a_loop(r, repeated, index)) {
            out.starts = std::move(repeated);
            out.source = IterationSource::loop;
        } else if (!repeated.empty()) {
            out.note = Fact(FactKind::iterations_none)
                           .text("why", "repeats_not_loop")
                           .count("repeats", static_cast<std::int64_t>(repeated.size() - 1));
        } else {
            out.note = Fact(FactKind::iterations_none).text("why", "none");
        }
    }
    if (out.source != IterationSource::none && !out.judged())
        out.note = Fact(FactKind::iterations_none)
                       .text("why", "too_few")
                       .count("iterations", static_cast<std::int64_t>(out.complete()));
    return out;
}

}  // namespace memsnap::analysis::detail
