// The document of `trace` ("kind": "trace"): one device's replayed trace.
#include "common.hpp"
#include "documents.hpp"
#include "phrases.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report::doc {

namespace {

using analysis::TraceResult;

std::string seconds_since(std::int64_t first_us, std::int64_t us) {
    if (first_us < 0 || us < 0) return "time unknown";
    return fmt::format("+{:.3f} s", static_cast<double>(us - first_us) / 1e6);
}

void add_header(Node& root, const TraceResult& t) {
    root.add("file", Value::text_of(t.file)).machines_only();
    root.add("generation", Value::text_of(t.generation)).machines_only();
    root.add("device", Value::count(t.device)).machines_only();
    root.add(numbers("devices", std::vector<std::int64_t>(t.devices.begin(), t.devices.end())));
    if (t.devices.size() > 1)
        root.add("devices_text", Value::text_of(fmt::format("{} (--device N for another)", device_list(t.devices))),
                 "devices with a trace")
            .people_only();
    root.add("source", Value::word(t.source));
    root.add("events", Value::count(static_cast<std::int64_t>(t.events)), t.ordered() ? "events" : "allocations");
    root.add("time_first_us", time_us(t.time_first_us)).machines_only();
    root.add("time_last_us", time_us(t.time_last_us)).machines_only();
    if (t.time_first_us >= 0 && t.time_last_us >= 0)
        root.add("span", Value::seconds(static_cast<double>(t.time_last_us - t.time_first_us) / 1e6)).people_only();
    if (t.ordered())
        root.add(
                "ring_buffer",
                Value::text_of(!t.recorded   ? "not judged: the trace holds no alloc events"
                               : t.truncated ? "truncated: the trace does not reach back to the start (recording was "
                                               "restarted, or a max_entries ring buffer wrapped)"
                               : t.start_unseen ? "not shown complete: some blocks it frees were made before its first "
                                                  "entry (recording started late, or entries were dropped)"
                               : t.started_late ? "complete since recording started, as far as the trace shows"
                                                : "complete as far as the trace shows"),
                "ring buffer")
            .people_only();
    if (t.live_before_trace_blocks > 0)
        root.add("before_trace",
                 Value::text_of(fmt::format(
                     "{} ({}) live at the end were made before the first entry: {}",
                     counted(t.live_before_trace_blocks, "block"), util::human_bytes(t.live_before_trace_bytes),
                     t.live_before_trace_with_stack == 0
                         ? std::string("when and where the trace cannot say")
                         : fmt::format("the trace cannot say when; {} of them carry the stack that made them",
                                       t.live_before_trace_with_stack))),
                 "before it")
            .people_only();
    root.add("live_before_trace_blocks", Value::count(t.live_before_trace_blocks)).machines_only();
    root.add("live_before_trace_bytes", Value::bytes(t.live_before_trace_bytes)).machines_only();
    root.add("truncated", Value::flag(t.truncated)).machines_only();
    root.add("recorded", Value::flag(t.recorded)).machines_only();
    root.add("started_late", Value::flag(t.started_late)).machines_only();
    root.add("start_unseen", Value::flag(t.start_unseen)).machines_only();
    root.add("iterations_text",
             Value::text_of(fmt::format("{} ({}){}", t.iterations, analysis::to_string(t.iteration_source),
                                        t.iterations_judged || t.iterations == 0 ? "" : ": too few to judge by")),
             "iterations")
        .people_only();
    root.add("iterations", Value::count(static_cast<std::int64_t>(t.iterations))).machines_only();
    root.add("iteration_source", Value::word(analysis::to_string(t.iteration_source))).machines_only();
    root.add("iterations_judged", Value::flag(t.iterations_judged)).machines_only();
    root.add(
        numbers("iteration_starts", std::vector<std::int64_t>(t.iteration_starts.begin(), t.iteration_starts.end())));
    root.add(numbers("snapshot_events", std::vector<std::int64_t>(t.snapshot_events.begin(), t.snapshot_events.end())));
    if (!t.snapshot_events.empty())
        root.add("snapshots", Value::text_of(fmt::format("{} taken while recording (first at event {})",
                                                         t.snapshot_events.size(), t.snapshot_events.front())))
            .people_only();
    if (t.allocated_by_iteration.size() >= 2) {  // one point is no shape
        const auto [lo, hi] = std::minmax_element(t.allocated_by_iteration.begin(), t.allocated_by_iteration.end());
        root.add("allocated",
                 Value::text_of(fmt::format("{}  highest per iteration, {} → {}", sparkline(t.allocated_by_iteration),
                                            util::human_bytes(*lo), util::human_bytes(*hi))))
            .people_only();
    }
    // Lists after the header's lines, which they would split.
    root.add(facts("truncation_evidence", t.truncation_evidence, "recording"));
    root.add(facts("disagreements", t.disagreements, "disagrees"));
}

void add_peak(Node& root, const TraceResult& t) {
    // Block history says nothing of when; a trace of state only replays nothing to peak.
    if (!t.ordered() || !t.recorded) {
        root.add("peak", Value::none()).machines_only();
        return;
    }
    // The bytes before event N were reached by event N - 1, at its time.
    const auto title =
        t.peak.event == 0
            ? fmt::format("Peak {} allocated at the trace's start, before its first event",
                          util::human_bytes(t.peak.bytes))
            : fmt::format("Peak {} allocated, {} into the trace (reached by event {})", util::human_bytes(t.peak.bytes),
                          seconds_since(t.time_first_us, t.peak.time_us), t.peak.event - 1);
    auto& peak = root.add(Node::object("peak", Layout::section, title));
    peak.add("bytes", Value::bytes(t.peak.bytes)).machines_only();
    peak.add("time_us", time_us(t.peak.time_us)).machines_only();
    peak.add("event", Value::count(static_cast<std::int64_t>(t.peak.event))).machines_only();
    peak.add("reached_by_event", reached_by_event(t.peak)).machines_only();
    if (const auto caveat = peak_caveat(t.peak))
        peak.add("caveat", Value::text_of(*caveat), "trace vs snapshot").people_only();
    add_usage(peak, t.peak.usage);
}

Node site_record(const analysis::TraceSite& s, const TraceResult& t) {
    auto r = Node::object("", Layout::facts);
    r.add("rank", Value::count(static_cast<std::int64_t>(s.rank))).in_headline();
    r.add("live_bytes", Value::bytes(s.live_bytes), "live").in_headline();
    r.add("live_allocations", Value::count(s.live_allocations, "allocation"), "allocations").in_headline();
    r.add("verdict", Value::verdict(analysis::to_string(s.verdict))).in_headline();
    add_site(r, s.site);
    r.add("category", Value::word(analysis::to_string(s.category))).in_headline();
    if (s.verdict == analysis::Verdict::leak)
        r.add("leak",
              Value::text_of(fmt::format("+{} ({}) every iteration, still live",
                                         counted(s.leak_allocations_per_iteration, "allocation"),
                                         util::human_bytes(s.leak_bytes_per_iteration))),
              "kept")
            .people_only();
    r.add(numbers("per_iteration", s.per_iteration));
    r.add("per_iteration_first", Value::count(static_cast<std::int64_t>(s.per_iteration_first))).machines_only();
    if (!s.per_iteration.empty())
        r.add("made", Value::text_of(
                          fmt::format("per iteration{}: {}; before the first: {}; in the unfinished last: {}",
                                      s.per_iteration_first ? fmt::format(" from #{}", s.per_iteration_first + 1) : "",
                                      run_lengths(s.per_iteration), s.warmup_allocations, s.current_allocations)))
            .people_only();
    // Before the first iteration and in the last only where a whole iteration was found; a
    // leak's rate only where they were judged: else a 0 or every allocation would read as a finding.
    const auto if_iterations = [&](std::int64_t n) { return t.iterations == 0 ? Value::none() : Value::count(n); };
    r.add("warmup_allocations", if_iterations(s.warmup_allocations)).machines_only();
    r.add("current_allocations", if_iterations(s.current_allocations)).machines_only();
    r.add("leak_allocations_per_iteration",
          t.iterations_judged ? Value::count(s.leak_allocations_per_iteration) : Value::none())
        .machines_only();
    r.add("leak_bytes_per_iteration", t.iterations_judged ? Value::bytes(s.leak_bytes_per_iteration) : Value::none())
        .machines_only();
    auto& stacks = r.add(Node::list("stacks", Layout::section));
    for (const auto& st : s.stacks)
        stacks.add(stack(
            st, t.frame_table,
            fmt::format("stack ({}, {})", counted(st.delta_blocks, "allocation"), util::human_bytes(st.delta_bytes)),
            !st.frames.empty()));
    add_stacks_not_shown(r, s.stacks_not_shown, "allocations", "stack");
    return r;
}

void add_timeline(Node& root, const TraceResult& t) {
    auto& timeline = root.add(Node::list("timeline", Layout::hidden));
    timeline.count = t.timeline.size();
    timeline.make = [&t](std::size_t i) {
        const auto& p = t.timeline[i];
        auto point = Node::object("", Layout::facts);
        point.add("event", Value::count(static_cast<std::int64_t>(p.event)));
        point.add("time_us", time_us(p.time_us));
        point.add("allocated_bytes", Value::bytes(p.allocated));
        point.add("reserved_bytes", Value::bytes(p.reserved));
        return point;
    };
    root.add(numbers("allocated_by_iteration", t.allocated_by_iteration));
}

}  // namespace

Document trace(const TraceResult& t) {
    Document doc;
    doc.kind = "trace";
    doc.title = fmt::format("trace of {}, device {} ({})", t.file, t.device,
                            t.generation.empty() ? "generation unknown" : t.generation);
    add_header(doc.root, t);
    doc.root.add(headline(t.headline));
    add_peak(doc.root, t);
    auto& ooms = doc.root.add(Node::list("ooms", Layout::records, "Out-of-memory events"));
    if (t.ooms.empty()) ooms.layout = Layout::hidden;
    // Long lists are made as they are written (a trace may hold thousands of OOMs and sites).
    ooms.count = t.ooms.size();
    ooms.make = [&t](std::size_t i) {
        return oom(t.ooms[i], t.frame_table, seconds_since(t.time_first_us, t.ooms[i].time_us), &t.peak.usage);
    };
    doc.root.add("ooms_total", Value::count(static_cast<std::int64_t>(t.ooms_total))).machines_only();
    const auto not_listed = t.sites_total - t.sites.size();
    auto& sites = doc.root.add(Node::list(
        "sites", Layout::records,
        not_listed == 0
            ? fmt::format("Live at the end, by site ({} of {} sites)", t.sites.size(), t.sites_total)
            : fmt::format("Live at the end, by site ({} of {} sites; the other {} hold {} in {})", t.sites.size(),
                          t.sites_total, not_listed, util::human_bytes(t.sites_not_listed_bytes),
                          counted(t.sites_not_listed_allocations, "allocation"))));
    sites.primary = true;
    sites.prototype = std::make_shared<const Node>(site_record(analysis::TraceSite{}, t));  // CSV header of none
    sites.count = t.sites.size();
    sites.make = [&t](std::size_t i) { return site_record(t.sites[i], t); };
    doc.root.add("sites_total", Value::count(static_cast<std::int64_t>(t.sites_total))).machines_only();
    doc.root.add("sites_not_listed_bytes", Value::bytes(t.sites_not_listed_bytes)).machines_only();
    doc.root.add("sites_not_listed_allocations", Value::count(t.sites_not_listed_allocations)).machines_only();
    add_timeline(doc.root, t);
    doc.root.add(facts("notes", t.notes, "Notes"));
    return doc;
}

}  // namespace memsnap::report::doc
