// The sample of trace events a capture's description keeps, which a trend compares between
// captures: a trace of at most 4,096 timed events (of the device asked for) is kept whole, a
// longer one by the events whose hash is a multiple of 64, decided in one pass.

#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/snapshot/model.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

using namespace memsnap;
using snapshot::TraceAction;

namespace {

// `timed` events on device 0 with a time (the first the `first`-th of a longer run of them),
// `untimed` without, `elsewhere` on device 1, and a segment on each device so that either may
// be asked for.
snapshot::Snapshot trace_of(std::size_t timed, std::size_t untimed, std::size_t elsewhere, std::size_t first = 0) {
    snapshot::Snapshot s;
    s.source.path = "sample.pickle";
    std::vector<snapshot::TraceEvent> events;
    const auto add = [&](std::int64_t time, std::int16_t device) {
        const std::size_t n = first + events.size();
        snapshot::TraceEvent e;
        e.set_action(n % 2 == 0 ? TraceAction::alloc : TraceAction::free_completed);
        e.addr = 0x7f0000000000 + static_cast<std::int64_t>(n / 2) * 0x200000;
        e.size = 4096;
        e.time_us = time;
        e.device = device;
        events.push_back(e);
    };
    for (std::size_t i = 0; i < timed; ++i) add(static_cast<std::int64_t>(1000 + first + i), 0);
    for (std::size_t i = 0; i < untimed; ++i) add(-1, 0);
    for (std::size_t i = 0; i < elsewhere; ++i) add(static_cast<std::int64_t>(500000 + i), 1);
    s.events = {events.begin(), events.end()};
    for (int device = 0; device < 2; ++device) {
        snapshot::Segment seg;
        seg.device = device;
        seg.address = 0x10000000 * (device + 1);
        s.segments.push_back(seg);
    }
    s.trace_devices = 2;
    return s;
}

analysis::SnapshotContents describe(const snapshot::Snapshot& s, std::optional<int> device) {
    analysis::AnalysisOptions options;
    options.device = device;
    return analysis::describe_snapshot(s, options);
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("trace sample: whole up to 4096 timed events of the device and sampled past them") {
        // Untimed events and another device's do not count towards the 4,096.
        const auto whole = describe(trace_of(4096, 50, 300), 0);
        CHECK(whole.trace_sample_all);
        CHECK(whole.trace_sample.size() == 4096);
        CHECK(std::is_sorted(whole.trace_sample.begin(), whole.trace_sample.end()));

        // One more timed event: the events whose hash is a multiple of 64, the first 4,096's
        // among them.
        const auto sampled = describe(trace_of(4097, 50, 300), 0);
        CHECK_FALSE(sampled.trace_sample_all);
        CHECK(std::is_sorted(sampled.trace_sample.begin(), sampled.trace_sample.end()));
        CHECK(std::all_of(sampled.trace_sample.begin(), sampled.trace_sample.end(),
                          [](std::uint64_t h) { return h % 64 == 0; }));
        std::vector<std::uint64_t> of_first;
        std::copy_if(whole.trace_sample.begin(), whole.trace_sample.end(), std::back_inserter(of_first),
                     [](std::uint64_t h) { return h % 64 == 0; });
        CHECK_FALSE(of_first.empty());
        CHECK(
            std::includes(sampled.trace_sample.begin(), sampled.trace_sample.end(), of_first.begin(), of_first.end()));
        CHECK(sampled.trace_sample.size() <= of_first.size() + 1);

        // Counted in the same pass, untimed events too: 5,000 of device 0, half of them allocs.
        CHECK(whole.trace_events_by_action.at("alloc") == 2073);
        CHECK(whole.trace_events_by_action.at("free_completed") == 2073);
        CHECK(whole.trace_first_us == 1000);
        CHECK(whole.trace_last_us == 1000 + 4095);

        // Sampled past 4,096 is sampled to the end: 8,192 timed events give the sampled events
        // of the first 4,096 and of the next 4,096, each taken whole on its own.
        const auto long_trace = describe(trace_of(8192, 0, 0), 0);
        CHECK_FALSE(long_trace.trace_sample_all);
        std::vector<std::uint64_t> expected;
        for (const std::size_t first : {std::size_t{0}, std::size_t{4096}}) {
            const auto half = describe(trace_of(4096, 0, 0, first), 0);
            REQUIRE(half.trace_sample_all);
            std::copy_if(half.trace_sample.begin(), half.trace_sample.end(), std::back_inserter(expected),
                         [](std::uint64_t h) { return h % 64 == 0; });
        }
        std::sort(expected.begin(), expected.end());
        CHECK(long_trace.trace_sample == expected);
        CHECK(expected.size() > 64);

        // Every device: the other device's events count, and the trace is sampled.
        const auto all = describe(trace_of(4000, 0, 300), std::nullopt);
        CHECK_FALSE(all.trace_sample_all);
        CHECK(describe(trace_of(4000, 0, 300), 0).trace_sample_all);
        CHECK(describe(trace_of(4000, 0, 300), 1).trace_sample.size() == 300);
    }
}
