// The packed trace store: every value a TraceEvent can hold reads back exactly, whether it
// fits the 16-byte form or is kept whole, and what a real capture holds fits.

#include <memsnap/snapshot/model.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

using namespace memsnap;
using snapshot::TraceAction;
using snapshot::TraceEvent;

namespace {

TraceEvent event(std::int64_t addr, std::int64_t size, std::int64_t time_us, int device = 0,
                 TraceAction action = TraceAction::alloc, std::size_t stream = 0, std::uint32_t stack = 7) {
    TraceEvent e;
    e.addr = addr;
    e.size = size;
    e.time_us = time_us;
    e.device = static_cast<std::int16_t>(device);
    e.set_action(action);
    e.set_stream(stream);
    e.stack = snapshot::StackId(stack);
    return e;
}

bool same(const TraceEvent& a, const TraceEvent& b) {
    return a.addr == b.addr && a.size == b.size && a.time_us == b.time_us && a.device == b.device &&
           a.action() == b.action() && a.stream() == b.stream() && a.stack == b.stack;
}

}  // namespace

TEST_CASE("trace events: values in and out of the packed range read back exactly" * doctest::test_suite("unit")) {
    constexpr std::int64_t day_us = std::int64_t{86'400} * 1'000'000;
    constexpr std::int64_t t0 = 1'764'547'200'000'000;  // 2025-12-01, in microseconds
    const std::vector<TraceEvent> written{
        event(0x7f12'3456'0000, 512, t0),
        event(0x7f12'3456'0200, 0, -1),                            // time not recorded
        event(-1, std::int64_t{1} << 31, t0 - 5),                  // 2 GiB: in units of 512
        event(5, (std::int64_t{1} << 40) - 512, t0 + 6 * day_us),  // 1 TiB less 512
        event(5, (std::int64_t{1} << 40) + 3, t0),                 // odd and past 2 GiB: kept whole
        event(5, -4096, t0),                                       // negative (a crafted file): whole
        event(5, 100, t0 + 7 * day_us),                            // a week after the first: whole
        event(5, 100, t0 - 7 * day_us),
        event(5, 100, std::numeric_limits<std::int64_t>::min()),
        event(5, 100, std::numeric_limits<std::int64_t>::max()),
        event(std::numeric_limits<std::int64_t>::max(), 100, t0, 255, TraceAction::other, 4095,
              std::numeric_limits<std::uint32_t>::max()),
        event(5, 100, t0, 256),  // a device past 255: whole
        event(5, 100, t0, -1),
        event(5, 100, t0, 0, TraceAction::oom, 17, 0),
        event(5, 100, t0, 0, static_cast<TraceAction>(15)),  // the packed form's escape value
    };
    const snapshot::TraceEvents stored(written.begin(), written.end());
    REQUIRE(stored.size() == written.size());
    for (std::size_t i = 0; i < written.size(); ++i) {
        CAPTURE(i);
        CHECK(same(stored[i], written[i]));
        CHECK(stored.action_at(i) == written[i].action());
        CHECK(stored.device_at(i) == written[i].device);
    }
    CHECK(same(stored.front(), written.front()));
    CHECK(same(stored.back(), written.back()));
    // Iterators, ranges algorithms and reverse iteration see the same values.
    CHECK(std::ranges::equal(stored, written, same));
    CHECK(std::equal(stored.rbegin(), stored.rend(), written.rbegin(), same));
    const auto odd = std::ranges::find_if(stored, [](const TraceEvent& e) { return e.size == 100 && e.device == 256; });
    REQUIRE(odd != stored.end());
    CHECK(odd.index() == 11);
    CHECK(odd->device == 256);

    SUBCASE("replacing an event, whole or packed, in either direction") {
        snapshot::TraceEvents copy = stored;
        for (std::size_t i = 0; i < written.size(); ++i) copy.set(i, written[written.size() - 1 - i]);
        for (std::size_t i = 0; i < written.size(); ++i) {
            CAPTURE(i);
            CHECK(same(copy[i], written[written.size() - 1 - i]));
        }
    }
    SUBCASE("a device set after the event was stored, past the packed range and back") {
        snapshot::TraceEvents copy = stored;
        for (const int device : {3, 300, 1, -2, 0x7FFF, 0}) {
            copy.set_device(0, static_cast<std::int16_t>(device));
            copy.set_device(4, static_cast<std::int16_t>(device));
            auto first = written[0], fifth = written[4];
            first.device = fifth.device = static_cast<std::int16_t>(device);
            CHECK(same(copy[0], first));
            CHECK(same(copy[4], fifth));
            CHECK(copy.device_at(0) == first.device);
            CHECK(copy.device_at(4) == fifth.device);
            CHECK(same(copy[1], written[1]));
        }
    }
}

TEST_CASE("trace events: a trace that starts without times packs its later times" * doctest::test_suite("unit")) {
    snapshot::TraceEvents stored{event(1, 512, -1), event(2, 512, 1'000'000'000'000'000),
                                 event(3, 512, 1'000'000'000'000'001)};
    CHECK(stored[0].time_us == -1);
    CHECK(stored[1].time_us == 1'000'000'000'000'000);
    CHECK(stored[2].time_us == 1'000'000'000'000'001);
    stored.clear();
    CHECK(stored.empty());
    stored.push_back(event(1, 512, 42));
    CHECK(stored[0].time_us == 42);
}

TEST_CASE("trace events: real values pack and the packed range ends where documented" * doctest::test_suite("unit")) {
    constexpr std::int64_t t0 = 1'764'547'200'000'000;
    constexpr std::int64_t base = 0x7f12'3456'0000;  // the first address other than 0
    constexpr std::int64_t span = std::int64_t{1} << 47;
    constexpr std::int64_t mib16 = std::int64_t{16} << 20;
    constexpr std::int64_t gib8 = std::int64_t{8} << 30;
    constexpr std::int64_t s134 = 134'217'727;  // the furthest time from the chunk's first, in µs
    struct Case {
        TraceEvent event;
        bool packed;
    };
    const std::vector<Case> cases{
        {event(0, 0, t0, 0, TraceAction::snapshot), true},  // address 0 sets no base
        {event(base, 512, t0), true},
        {event(base + 512, mib16 - 1, t0 + s134), true},  // any byte count below 16 MiB
        {event(base - 512, mib16 + 512, t0 - s134), true},
        {event(base, mib16 + 1, t0), false},  // odd and 16 MiB or more
        {event(base, gib8 - 512, t0), true},
        {event(base, gib8, t0), false},
        {event(base + span - 512, 512, t0), true},  // 2^47 either side of the base
        {event(base + span, 512, t0), false},
        {event(base - span + 512, 512, t0), true},
        {event(base - span, 512, t0), false},
        {event(base + 256, 512, t0), false},       // not a multiple of 512
        {event(base, 512, t0 + s134 + 1), false},  // too far from the chunk's first time
        {event(base, 512, t0 - s134 - 1), false},
        {event(base, 512, t0, 15, TraceAction::free_completed, 15, (1u << 24) - 1), true},
        {event(base, 512, t0, 16), false},
        {event(base, 512, t0, 0, TraceAction::alloc, 16), false},
        {event(base, 512, t0, 0, TraceAction::alloc, 0, 1u << 24), false},
        {event(std::int64_t{80} << 30, 512, t0, 0, TraceAction::oom), false},  // its address holds free bytes
        {event(base, 512, -1), true},
    };
    snapshot::TraceEvents stored;
    std::size_t whole = 0;
    for (const auto& c : cases) {
        CAPTURE(stored.size());
        stored.push_back(c.event);
        whole += c.packed ? 0 : 1;
        CHECK(stored.kept_whole() == whole);
        CHECK(same(stored.back(), c.event));
    }
    for (std::size_t i = 0; i < cases.size(); ++i) {
        CAPTURE(i);
        CHECK(same(stored[i], cases[i].event));
    }

    SUBCASE("each 1,024 events count their times from their own first") {
        snapshot::TraceEvents trace;
        const std::int64_t hour = std::int64_t{3'600} * 1'000'000;
        for (std::int64_t i = 0; i < 4096; ++i)  // an hour between chunks, 100 µs within one
            trace.push_back(event(base + 512 * i, 512, t0 + (i / 1024) * hour + (i % 1024) * 100));
        CHECK(trace.kept_whole() == 0);
        for (std::size_t i = 0; i < trace.size(); ++i) {
            const auto n = static_cast<std::int64_t>(i);
            REQUIRE(trace[i].time_us == t0 + (n / 1024) * hour + (n % 1024) * 100);
            REQUIRE(trace[i].addr == base + 512 * n);
        }
        // A time set later in a chunk that had none is that chunk's base.
        snapshot::TraceEvents late{event(base, 512, -1)};
        late.set(0, event(base, 512, t0 + 5 * hour));
        CHECK(late.kept_whole() == 0);
        CHECK(late[0].time_us == t0 + 5 * hour);
    }
}
