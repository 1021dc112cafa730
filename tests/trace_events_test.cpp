// The packed trace store: every value a TraceEvent can hold reads back exactly, whether it
// fits the 24-byte form or is kept whole.

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
