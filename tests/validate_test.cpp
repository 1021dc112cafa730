// The checks of a finished model: what does not add up is read, counted and named in one
// warning per kind; what no GPU could hold is refused.

#include "support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

using namespace memsnap;
using nlohmann::json;

namespace {

json block(std::int64_t address, std::int64_t size, const char* state = "active_allocated") {
    json frames = json::array();
    frames.push_back({{"filename", "/p/train.py"}, {"line", 7}, {"name", "step"}});
    return {{"address", address}, {"size", size}, {"requested_size", size}, {"state", state}, {"frames", frames}};
}

// Lists as vectors: a braced list of one json is a copy of it to some compilers, not an array.
json segment(std::int64_t address, std::int64_t total, std::vector<json> blocks) {
    return {{"device", 0}, {"address", address},      {"total_size", total},
            {"stream", 0}, {"segment_type", "large"}, {"blocks", json(std::move(blocks))}};
}

json segments(std::vector<json> list) { return json(std::move(list)); }

json traces(std::vector<std::vector<json>> per_device) {
    json out = json::array();
    for (auto& events : per_device) out.push_back(json(std::move(events)));
    return out;
}

json event(const char* action, std::int64_t addr) {
    return {{"action", action}, {"addr", addr}, {"size", 512},
            {"stream", 0},      {"time_us", 1}, {"frames", json::array()}};
}

snapshot::Snapshot load(std::vector<json> segment_list, std::vector<std::vector<json>> per_device = {}) {
    json doc = json::object();
    doc["segments"] = segments(std::move(segment_list));
    if (!per_device.empty()) doc["device_traces"] = traces(std::move(per_device));
    return snapshot::load_snapshot_bytes(doc.dump(), "t.json");
}

// The warning that contains `words`, or "" when there is none.
std::string warning_with(const snapshot::Snapshot& s, std::string_view words) {
    const auto it = std::find_if(s.warnings.begin(), s.warnings.end(),
                                 [&](const std::string& w) { return w.find(words) != std::string::npos; });
    return it == s.warnings.end() ? "" : *it;
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("a consistent capture has no warnings") {
        const auto s = load({segment(4096, 1024, {block(4096, 512), block(4608, 512, "inactive")})},
                            {{event("alloc", 4096), event("free_requested", 4096), event("free_completed", 4096),
                              event("alloc", 4096)}});
        CHECK(s.warnings.empty());
    }

    TEST_CASE("negative sizes count as 0 bytes / with a count") {
        const auto s = load({segment(4096, -1024, {block(4096, -512), block(4608, -512)})});
        CHECK(s.segments[0].total_size == 0);
        CHECK(s.blocks[0].size == 0);
        // Each block's size and requested size, and the segment's total.
        CHECK(warning_with(s, "negative size") == "5 negative size(s) were counted as 0 bytes");
    }

    TEST_CASE("blocks that do not add up to their segment and overlapping blocks") {
        const auto s = load({segment(4096, 4096, {block(4096, 1024), block(4608, 1024)}),
                             segment(1 << 20, 512, {block(1 << 20, 512)})});
        CHECK(warning_with(s, "do not add up") == "1 segment(s) hold blocks that do not add up to the segment's size");
        CHECK(warning_with(s, "overlap") == "1 block(s) overlap the block before them");
    }

    TEST_CASE("live blocks at one address are counted") {
        const auto s = load({segment(4096, 512, {block(4096, 512)}), segment(4096, 512, {block(4096, 512)})});
        CHECK(warning_with(s, "share an address") == "1 live block(s) share an address with another live block");
    }

    TEST_CASE("frames of the wrong type are left out with a count") {
        json b = block(4096, 512);
        json bad = {{"filename", 42}, {"line", "x"}, {"name", json::array()}};
        b["frames"] = json::array();
        b["frames"].push_back(bad);
        const auto s = load({segment(4096, 512, {b})});
        CHECK(warning_with(s, "wrong type").starts_with("1 frame(s) have a filename, name or line of the wrong type"));
    }

    TEST_CASE("sizes beyond 2^63 bytes in total are refused / naming the file") {
        const std::int64_t big = INT64_MAX;
        try {
            load({segment(0, big, {}), segment(0, big, {})});
            FAIL("loaded");
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::input);
            CHECK(e.describe().starts_with("t.json: "));
            CHECK(e.describe().find("2^63") != std::string::npos);
        }
    }

    TEST_CASE("frees without an alloc: counted only where the trace could have seen the alloc") {
        SUBCASE("a free of an address already freed: a request and its completion count once") {
            const auto s =
                load({}, {{event("alloc", 4096), event("free_completed", 4096), event("free_requested", 4096),
                           event("free_completed", 4096), event("free_completed", 4096)}});
            CHECK(warning_with(s, "already freed") ==
                  "2 trace free event(s) free an address that the trace had already freed, with no alloc in between");
        }
        SUBCASE("addresses past 48 bits, negative ones and a device past 255 count the same") {
            for (const std::int64_t address : {std::int64_t{1} << 50, std::int64_t{-4096}, std::int64_t{4096}}) {
                CAPTURE(address);
                std::vector<std::vector<json>> per_device(301);
                per_device[address == 4096 ? 300 : 0] = {event("alloc", address), event("free_completed", address),
                                                         event("free_completed", address), event("alloc", address),
                                                         event("free_completed", address)};
                const auto s = load({}, per_device);
                CHECK(warning_with(s, "already freed").starts_with("1 trace free event(s)"));
            }
        }
        SUBCASE("many addresses, each freed twice: every second free counts") {
            std::vector<json> events;
            for (std::int64_t i = 0; i < 5000; ++i) events.push_back(event("alloc", 512 * i));
            for (std::int64_t i = 0; i < 5000; ++i) events.push_back(event("free_completed", 512 * i));
            for (std::int64_t i = 0; i < 5000; i += 2) events.push_back(event("free_completed", 512 * i));
            const auto s = load({}, {events});
            CHECK(warning_with(s, "already freed").starts_with("2500 trace free event(s)"));
        }
        SUBCASE("many addresses freed, half allocated again, all freed twice more: what an alloc takes out") {
            // The allocs in the middle take their addresses out of the set of freed ones, the
            // others stay: 2,500 count in the second round, all 5,000 in the third.
            std::vector<json> events;
            for (std::int64_t i = 0; i < 5000; ++i) events.push_back(event("alloc", 512 * i));
            for (std::int64_t i = 0; i < 5000; ++i) events.push_back(event("free_completed", 512 * i));
            for (std::int64_t i = 0; i < 5000; i += 2) events.push_back(event("alloc", 512 * i));
            for (int round = 0; round < 2; ++round)
                for (std::int64_t i = 0; i < 5000; ++i) events.push_back(event("free_completed", 512 * i));
            const auto s = load({}, {events});
            CHECK(warning_with(s, "already freed").starts_with("7500 trace free event(s)"));
        }
        SUBCASE("a first event that is a free: its alloc fell out of the ring buffer") {
            const auto s =
                load({}, {{event("free_requested", 4096), event("free_completed", 4096), event("alloc", 8192)}});
            CHECK(s.warnings.empty());
        }
        SUBCASE("a device whose allocs were skipped (skip_actions)") {
            const auto s =
                load({}, {{event("free_completed", 4096), event("free_completed", 4096)}, {event("alloc", 4096)}});
            CHECK(s.warnings.empty());
        }
    }

    TEST_CASE("trace side tables hold each stream once / and the names of actions torch added however many there are") {
        std::vector<json> events;
        for (int round = 0; round < 2; ++round)
            for (int i = 0; i < 40; ++i) {
                json e = event(("action_" + std::to_string(i)).c_str(), 4096);
                e["stream"] = i % 3 == 0 ? 0 : 1000 + i;
                events.push_back(e);
            }
        const auto s = load({}, {events});
        CHECK(s.streams.size() == 1 + 26);               // stream 0 and the 26 others
        CHECK(s.event_notes.size() == s.events.size());  // every action is one torch does not have
        for (std::size_t i = 0; i < s.events.size(); ++i) {
            CHECK(s.action_name(i) == "action_" + std::to_string(i % 40));
            CHECK(s.stream_of(s.events[i]) == (i % 40 % 3 == 0 ? 0 : 1000 + static_cast<std::int64_t>(i % 40)));
        }
    }

    TEST_CASE("past 4096 streams a trace folds the others into stream 0") {
        std::vector<json> events;
        for (int i = 0; i < 5000; ++i) {
            json e = event("alloc", 4096 * (i + 1));
            e["stream"] = 1 + i;
            events.push_back(e);
        }
        const auto s = load({}, {events});
        REQUIRE(s.events.size() == 5000);
        CHECK(s.streams.size() == snapshot::TraceEvent::max_streams);
        CHECK(s.stream_of(s.events[4094]) == 4095);
        CHECK(s.stream_of(s.events[4095]) == 0);
        CHECK(s.events[4095].action() == snapshot::TraceAction::alloc);
    }

    TEST_CASE("a trace entry's compile context and user metadata are noted only when set") {
        // torch 2.5 on writes both keys on every entry, "N/A" and "" when nothing was set.
        std::vector<json> events;
        for (int i = 0; i < 4; ++i) {
            json e = event("alloc", 4096 * (i + 1));
            e["compile_context"] = i == 1 ? "Torch-Compiled Region: 0/0" : "N/A";
            e["user_metadata"] = i == 2 ? "epoch=3" : "";
            events.push_back(e);
        }
        const auto s = load({}, {events});
        REQUIRE(s.events.size() == 4);
        REQUIRE(s.event_notes.size() == 2);
        CHECK(s.note_of(0) == nullptr);
        CHECK(s.note_of(3) == nullptr);
        REQUIRE(s.note_of(1) != nullptr);
        CHECK(s.str(s.note_of(1)->compile_context) == "Torch-Compiled Region: 0/0");
        CHECK(s.note_of(1)->user_metadata == snapshot::StringId{});
        REQUIRE(s.note_of(2) != nullptr);
        CHECK(s.note_of(2)->compile_context == snapshot::StringId{});
        CHECK(s.str(s.note_of(2)->user_metadata) == "epoch=3");
        // The keys were there all the same: they date the capture.
        CHECK(std::ranges::count(s.source.features, "compile_context") == 1);
        CHECK(std::ranges::count(s.source.features, "user_metadata") == 1);
    }

}  // TEST_SUITE

TEST_SUITE("unit") {
    TEST_CASE("allocator_settings: a key given twice keeps its last value / at most 1000 keys") {
        // JSON objects keep one value per key already; pickles can repeat keys, as the fuzz and
        // hostile cases do. Here: the cap, through JSON.
        json doc = json::object();
        doc["segments"] = json::array();
        doc["allocator_settings"] = json::object();
        for (int i = 0; i < 1500; ++i) doc["allocator_settings"][fmt::format("key{:04}", i)] = i;
        const auto s = snapshot::load_snapshot_bytes(doc.dump(), "t.json");
        CHECK(s.allocator_settings.size() == 1000);
        CHECK(warning_with(s, "allocator_settings holds more than 1000 keys; 500 left out") != "");
    }

}  // TEST_SUITE
