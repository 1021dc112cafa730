#pragma once
// Can two captures be compared as moments of one program, or only as levels? Computed once
// for a pair (diff) or for each neighbouring pair of a series (trend), before any verdict,
// from evidence the caller gathers; filters never change it.
//
// One process, in three answers:
//   yes      trace events equal in (time, address, size, action) in both captures: time_us is
//            wall-clock time, so no other run shares them.
//   no       something rules it out: different devices; user code of different checkouts (a
//            root nested in the other is the same checkout); different allocator settings; a
//            cumulative counter that falls; the second capture's trace ending before the
//            first's begins; traces that overlap in time and share no event.
//   unknown  everything else. Blocks that survive at the same address with the same size and
//            stack, segments at the same address and counters that grow fit one process but
//            prove nothing: a fresh run of the same script reproduces all of them.
// The same workload (judged only when one process is not shown): the sites that hold the memory of each capture (by
// their path below the capture's project root, line, function and category) are the same, up to a tenth of each
// capture's bytes with a stack; unknown when most memory of a capture has no stack. A series
// of summary tables from one log is one workload.
//
// Behaviour verdicts (verdict.hpp) need a known order and: one process (yes), or one process
// not ruled out (unknown) and the same workload, in which case every report prints the caveat.

#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/stats/capture.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace memsnap::analysis {

enum class Answer : std::uint8_t { yes, no, unknown };
std::string_view to_string(Answer answer);

// What bears on one process, as the caller found it.
struct ProcessEvidence {
    std::int64_t shared_events = 0;      // trace events both captures hold
    bool shared_sampled = false;         // shared_events counts a sample of them (a series)
    bool same_trace = false;             // both traces span the same times and share every event
    std::int64_t overlap_apart = 0;      // events both cover in time while sharing none
    std::optional<Fact> devices_differ;  // FactKind::devices_differ
    std::optional<Fact> roots_differ;    // FactKind::roots_differ
    std::optional<Fact> main_scripts_differ;
    std::optional<Fact> setting_differs;
    std::optional<Fact> versions_differ;  // FactKind::versions_differ
    std::optional<Fact> counter_falls;
    std::optional<Fact> order_reversed;  // FactKind::trace_order_reversed
    std::optional<Fact> traces_apart;    // FactKind::traces_apart: no shared event, no overlap
    std::int64_t survivors = 0;          // live blocks at the same address, size and stack
    std::int64_t shared_segments = 0;
    std::optional<Fact> nothing_shared;  // live blocks on both sides, none at the same address
    bool counters_grow = false;
};

// A site's bytes in each capture, by an identity that holds across checkouts.
struct SiteLevels {
    std::uint64_t identity = 0;
    std::string label;  // for evidence
    std::int64_t before = 0, after = 0;
};

struct WorkloadEvidence {
    bool one_log = false;  // tables of one log file, in order
    // Bytes of live blocks, and of those with a stack, in each capture.
    std::int64_t allocated_before = 0, allocated_after = 0;
    std::int64_t stacked_before = 0, stacked_after = 0;
    std::vector<SiteLevels> sites;  // sites with a stack
};

struct Comparability {
    Answer same_process = Answer::unknown;
    Facts process_evidence;
    Answer same_workload = Answer::unknown;
    Facts workload_evidence;
    bool order_known = true;
    Facts order_evidence;
    // Behaviour verdicts may be given: a known order, and one process shown or not ruled out
    // with the same workload.
    bool behaviour_allowed() const {
        return order_known &&
               (same_process == Answer::yes || (same_process == Answer::unknown && same_workload == Answer::yes));
    }
    // Behaviour verdicts rest on the same workload alone: every report says so.
    bool caveat() const { return behaviour_allowed() && same_process != Answer::yes; }
    // The captures themselves contradict the order given (not merely no steps).
    bool order_contradicted() const {
        return std::any_of(order_evidence.begin(), order_evidence.end(),
                           [](const Fact& f) { return f.kind != FactKind::order_given; });
    }
    // Blocks can be followed from one capture to the other only in one process shown.
    bool one_process() const { return same_process == Answer::yes; }
};

// The answers from the evidence.
void judge_process(const ProcessEvidence& evidence, Comparability& out);

// Evidence against one process, as a diff and a series find it.
// Two project roots of different checkouts: neither lies inside the other.
bool other_checkout(const std::string& a, const std::string& b);
// The first allocator setting both captures record with different values (settings as
// (key, JSON text); null: the capture records none).
using AllocatorSettings = std::vector<std::pair<std::string, std::string>>;
std::optional<Fact> setting_differs(const AllocatorSettings* before, const AllocatorSettings* after);
// Summary tables whose rows tell two torch versions apart, or that come from two allocator
// backends: one process runs one torch and chooses its backend once. nullopt: no such sign.
std::optional<Fact> versions_differ(stats::TableLayout::Generation before, stats::TableLayout::Generation after);
std::optional<Fact> backend_differs(bool before_async, bool after_async);
void judge_workload(const WorkloadEvidence& evidence, Comparability& out);

}  // namespace memsnap::analysis
