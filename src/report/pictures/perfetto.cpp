// `trace --format perfetto`: the replay in the Chrome Trace Event Format, which Perfetto UI
// and chrome://tracing open. Counter tracks of allocated and reserved bytes (the timeline's
// points, the peak among them), a slice per iteration, instants for the peak, each OOM and
// each `snapshot` action. Every event is one JSON object from nlohmann, written as it is
// made: a trace of a million iterations must not become a million objects in memory.

#include "pictures.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <string>

#ifndef MEMSNAP_VERSION
#define MEMSNAP_VERSION "unknown"
#endif

namespace memsnap::report::detail {

namespace {

// Keys in the order people read an event: name, ph, ts, pid, tid, then the rest.
using json = nlohmann::ordered_json;

constexpr int kPid = 1;
constexpr std::size_t kFlushBytes = 1 << 16;

// The traceEvents array, one event a line, handed to the sink in pieces of about 64 KiB.
class EventStream {
  public:
    explicit EventStream(const Sink& sink) : sink_(sink) { buffer_ = "{\"traceEvents\": ["; }
    void add(const json& event) {
        buffer_ += first_ ? "\n" : ",\n";
        first_ = false;
        buffer_ += event.dump();
        if (buffer_.size() >= kFlushBytes) flush();
    }
    // Closes the array and the document with its other keys.
    void finish(const json& rest) {
        buffer_ += "\n]";
        for (const auto& item : rest.items()) buffer_ += ",\n" + json(item.key()).dump() + ": " + item.value().dump();
        buffer_ += "}\n";
        flush();
    }

  private:
    void flush() {
        sink_(buffer_);
        buffer_.clear();
    }
    const Sink& sink_;
    std::string buffer_;
    bool first_ = true;
};

// Microseconds of the trace's time_us; for captures without times (before torch 2.2), the
// event's position in the device's trace, so that the order still shows.
struct Clock {
    bool timed = false;
    std::int64_t first_us = 0;
    std::int64_t at(std::int64_t time_us, std::size_t event) const {
        if (!timed) return static_cast<std::int64_t>(event);
        return std::max(time_us, first_us);  // an event without a time is drawn at the start
    }
};

json event(std::string_view name, std::string_view ph, std::int64_t ts, int tid) {
    return {{"name", name}, {"ph", ph}, {"ts", ts}, {"pid", kPid}, {"tid", tid}};
}

json instant(std::string_view name, std::int64_t ts, int tid, json args) {
    auto e = event(name, "i", ts, tid);
    e["s"] = "p";  // process scope: a line across the device's tracks
    e["args"] = std::move(args);
    return e;
}

// Viewers name a counter's track "<name> <arg>" (Perfetto) or stack a counter's args into
// one area (chrome://tracing): one counter name per series keeps reserved from being drawn
// on top of allocated.
void counters(EventStream& out, const analysis::TraceResult& t, const Clock& clock) {
    const auto allocated = fmt::format("device {} allocated", t.device);
    const auto reserved = fmt::format("device {} reserved", t.device);
    std::int64_t last = std::numeric_limits<std::int64_t>::min();
    for (const auto& p : t.timeline) {
        // Viewers read a counter in ts order: a time that goes back is drawn at the one before.
        last = std::max(last, clock.at(p.time_us, p.event));
        auto a = event(allocated, "C", last, t.device);
        a["args"] = {{"bytes", p.allocated}};
        out.add(a);
        auto r = event(reserved, "C", last, t.device);
        r["args"] = {{"bytes", p.reserved}};
        out.add(r);
    }
}

void iterations(EventStream& out, const analysis::TraceResult& t, const Clock& clock) {
    const auto& starts = t.iteration_starts;
    const auto& times = t.iteration_start_times_us;
    for (std::size_t k = 0; k < t.iterations && k + 1 < starts.size() && k + 1 < times.size(); ++k) {
        const auto ts = clock.at(times[k], starts[k]);
        auto e = event(fmt::format("iteration {}", k + 1), "X", ts, t.device);
        e["cat"] = "iteration";
        e["dur"] = std::max<std::int64_t>(0, clock.at(times[k + 1], starts[k + 1]) - ts);
        json args = {{"first_event", starts[k]},
                     {"events", starts[k + 1] - starts[k]},
                     {"source", analysis::to_string(t.iteration_source)}};
        if (k < t.allocated_by_iteration.size()) args["allocated_max_bytes"] = t.allocated_by_iteration[k];
        e["args"] = std::move(args);
        out.add(e);
    }
}

void marks(EventStream& out, const analysis::TraceResult& t, const Clock& clock) {
    out.add(instant("peak", clock.at(t.peak.time_us, t.peak.event), t.device,
                    {{"allocated_bytes", t.peak.bytes}, {"event", t.peak.event}}));
    for (std::size_t k = 0; k < t.snapshot_events.size() && k < t.snapshot_times_us.size(); ++k)
        out.add(instant("snapshot", clock.at(t.snapshot_times_us[k], t.snapshot_events[k]), t.device,
                        {{"event", t.snapshot_events[k]}}));
    for (const auto& o : t.ooms)
        out.add(instant("OOM", clock.at(o.time_us, o.event), t.device,
                        {{"requested_bytes", o.requested_bytes},
                         {"device_free_bytes", o.device_free_bytes},
                         {"allocated_bytes", o.allocated_bytes},
                         {"reserved_bytes", o.reserved_bytes},
                         {"largest_free_block_bytes", o.largest_free_block_bytes},
                         {"stream", o.stream},
                         {"classification", analysis::to_string(o.classification)},
                         {"event", o.event}}));
}

// Flat keys: viewers show otherData as a list of metadata.
json other_data(const analysis::TraceResult& t, const Clock& clock) {
    json d = {{"file", t.file},
              {"memsnap_version", MEMSNAP_VERSION},
              {"generation", t.generation},
              {"device", t.device},
              {"source", t.source},
              {"events", t.events},
              {"counter_unit", "bytes"},
              {"counter_points", t.timeline.size()},
              {"peak_bytes", t.peak.bytes},
              {"iterations", t.iterations},
              {"iteration_source", analysis::to_string(t.iteration_source)},
              {"ooms_total", t.ooms_total},
              {"ooms_drawn", t.ooms.size()},
              {"snapshots", t.snapshot_events.size()},
              {"truncated", t.truncated}};
    if (clock.timed) {
        d["clock"] = "time_us";
        d["ts_unit"] = "microseconds, the trace's time_us";
    } else {
        d["clock"] = "event index";
        d["ts_unit"] = "trace events: the capture records no times, so ts N is the device's N-th trace event";
    }
    d["counters"] =
        "the timeline's points: evenly spaced over the replay, with the peak, iteration starts, OOMs and snapshots";
    if (!t.ordered()) d["note"] = "no timeline: this capture says nothing of when its allocations happened";
    return d;
}

}  // namespace

void trace_perfetto(const analysis::TraceResult& t, const Sink& sink) {
    const Clock clock{t.ordered() && t.time_first_us >= 0 && t.time_last_us >= 0, t.time_first_us};
    EventStream out(sink);
    auto process = event("process_name", "M", 0, t.device);
    process["args"] = {{"name", fmt::format("memsnap trace of {}", t.file)}};
    out.add(process);
    auto thread = event("thread_name", "M", 0, t.device);
    thread["args"] = {{"name", fmt::format("device {}", t.device)}};
    out.add(thread);
    if (t.ordered()) {
        counters(out, t, clock);
        iterations(out, t, clock);
        marks(out, t, clock);
    }
    out.finish({{"displayTimeUnit", "ms"}, {"otherData", other_data(t, clock)}});
}

}  // namespace memsnap::report::detail
