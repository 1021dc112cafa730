// Every real capture and every generated fixture parses and reports the exact figures of
// its expected.json; the model's invariants hold on all of them.

#include "analysis_support.hpp"
#include "python_json_dump.hpp"
#include "snapshot/builder.hpp"
#include "snapshot/json_reader.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/pickle/reader.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

using namespace memsnap;
using memsnap::test::fixtures_dir;
using memsnap::test::real_dir;

namespace {

void check_expected_figures(const std::filesystem::path& dir) {
    const auto expected = nlohmann::json::parse(test::read_text(dir / "expected.json"));
    REQUIRE(expected.is_array());
    REQUIRE(!expected.empty());
    for (const auto& entry : expected) {
        const std::string file = entry.at("file");
        CAPTURE(file);
        // Through the capture layer: wrapped files (.gz, a _memory_viz.py page) are unwrapped.
        const auto capture = capture::load_capture((dir / file).string(), {});
        REQUIRE(capture.is_snapshot());
        const auto summary = test::describe(capture.snapshot());
        const auto actual = nlohmann::json::parse(test::render_json(summary));
        for (const auto& item : entry.items()) {
            const std::string key = item.key();
            const auto& value = item.value();
            // sha256 names the capture's bytes; every other key, the file name included, matches.
            if (key == "sha256") continue;
            CAPTURE(key);
            REQUIRE(actual.contains(key));
            CHECK(actual.at(key) == value);
        }
    }
}

// Invariants that hold for any snapshot torch writes (torch-formats.md §4).
void check_invariants(const snapshot::Snapshot& snap) {
    std::int64_t reserved = 0, by_state = 0;
    for (const auto& seg : snap.segments) {
        reserved += seg.total_size;
        std::int64_t sum = 0;
        std::int64_t next = seg.address;
        for (const auto& b : snap.blocks_of(seg)) {
            CHECK(b.address == next);  // contiguous from the segment address
            next = b.address + b.size;
            sum += b.size;
            CHECK(b.size >= 0);
            if (b.active()) CHECK(b.requested_size <= b.size);
        }
        CHECK(sum == seg.total_size);
    }
    const auto totals = analysis::compute_totals(snap);
    for (const auto& b : snap.blocks) by_state += b.size;
    CHECK(totals.reserved_bytes == reserved);
    CHECK(by_state == reserved);
    CHECK(totals.allocated_bytes + (totals.active_bytes - totals.allocated_bytes) + totals.inactive_bytes ==
          totals.reserved_bytes);
    // The cache divides into what empty_cache can return and the rest; torch's split count
    // includes the free pages of expandable segments, which empty_cache unmaps.
    CHECK(totals.releasable_bytes + totals.non_releasable_bytes == totals.inactive_bytes);
    CHECK(totals.releasable_bytes >= 0);
    CHECK(totals.non_releasable_bytes >= 0);
    CHECK(totals.inactive_split_bytes <= totals.inactive_bytes);
    CHECK(totals.non_releasable_bytes <= totals.inactive_split_bytes);
    CHECK(totals.requested_bytes <= totals.allocated_bytes);
    CHECK(totals.internal_waste_bytes >= 0);
}

}  // namespace

TEST_CASE("real snapshots match expected.json on every key" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    check_expected_figures(real_dir() / "snapshots");
}

TEST_CASE("generated snapshots of every generation and writer match their expected.json" *
          doctest::test_suite("unit")) {
    check_expected_figures(fixtures_dir() / "snapshots");
}

TEST_CASE("invariants hold on every real capture and fixture" * doctest::test_suite("real")) {
    std::vector<std::filesystem::path> files = test::files_in(fixtures_dir() / "snapshots", ".pickle");
    for (const auto& f : test::files_in(fixtures_dir() / "snapshots", ".json"))
        if (f.filename() != "expected.json") files.push_back(f);
    for (const auto& dir : std::filesystem::directory_iterator(fixtures_dir() / "pairs"))
        for (const auto& f : test::files_in(dir.path()))
            if (f.extension() != ".json") files.push_back(f);
    if (test::have_real())
        for (const auto& f : test::files_in(real_dir() / "snapshots", ".pickle")) files.push_back(f);
    REQUIRE(files.size() > 20);
    for (const auto& f : files) {
        CAPTURE(f.string());
        check_invariants(snapshot::load_snapshot(f.string()));
    }
}

TEST_CASE("every real capture dumped with json.dump reads as its pickle does" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    auto files = test::files_in(real_dir() / "snapshots", ".pickle");
    for (const auto& f : test::files_in(real_dir() / "snapshots", ".pkl")) files.push_back(f);
    REQUIRE(files.size() >= 19);
    // What only the encoding changes: the format's encoding, writer and protocol.
    const auto without_source = [](nlohmann::json j) {
        for (const char* key : {"encoding", "writer", "protocol"}) j.at("format").erase(key);
        return j;
    };
    for (const auto& f : files) {
        CAPTURE(f.string());
        const std::string bytes = test::read_text(f);
        pickle::Document tree(bytes);
        pickle::Limits whole;  // no hook: the whole tree is held, as Python holds it
        whole.max_held_bytes = std::uint64_t{1} << 34;
        pickle::decode(tree, whole, nullptr);
        const std::string json = test::python_json_dump(tree);
        const auto from_pickle = snapshot::load_snapshot_bytes(bytes, f.string());
        const auto from_json = snapshot::load_snapshot_bytes(json, f.string());
        CHECK(from_json.source.encoding == "json");
        const auto expected = nlohmann::json::parse(test::render_json(test::describe(from_pickle)));
        const auto actual = nlohmann::json::parse(test::render_json(test::describe(from_json)));
        const auto want = without_source(expected), got = without_source(actual);
        CHECK(got.size() == want.size());
        for (const auto& item : want.items()) {
            const std::string key = item.key();
            CAPTURE(key);
            CHECK(got.value(key, nlohmann::json()) == item.value());
        }
    }
}

TEST_CASE("re-encodings of one snapshot give the same model" * doctest::test_suite("unit")) {
    const auto dir = fixtures_dir() / "snapshots";
    const auto reference = test::describe(snapshot::load_snapshot((dir / "gen_torch2.5_settings.pickle").string()));
    const auto reference_json = nlohmann::json::parse(test::render_json(reference));
    for (const char* name :
         {"gen_torch2.5_settings_p2.pickle", "gen_torch2.5_settings_p3.pickle", "gen_torch2.5_settings_p4.pickle",
          "gen_torch2.5_settings_p5.pickle", "gen_torch2.5_settings_cpp.pickle", "gen_torch2.5_settings.json",
          "gen_json_misnamed.pickle", "gen_trailing_padding.pickle"}) {
        CAPTURE(name);
        auto json =
            nlohmann::json::parse(test::render_json(test::describe(snapshot::load_snapshot((dir / name).string()))));
        for (const char* key :
             {"reserved_bytes", "allocated_bytes", "active_bytes", "requested_bytes", "blocks_by_state",
              "blocks_with_frames", "trace_events_by_action", "top_sites", "allocator_settings"})
            CHECK(json.at(key) == reference_json.at(key));
    }
}

TEST_CASE("the writer and the generation are recognised" * doctest::test_suite("unit")) {
    const auto dir = fixtures_dir() / "snapshots";
    auto load = [&](const char* name) { return snapshot::load_snapshot((dir / name).string()); };
    CHECK(load("gen_torch2.5_settings_cpp.pickle").source.writer == "torch C++ pickler");
    CHECK(load("gen_torch2.9_newest_cpp.pickle").source.writer == "torch C++ pickler");
    CHECK(load("gen_torch2.0_history_cpp.pickle").source.writer == "torch C++ pickler");
    CHECK(load("gen_torch2.5_settings_p2.pickle").source.writer == "Python pickle");
    CHECK(load("gen_torch2.5_settings_p5.pickle").source.protocol == 5);
    CHECK(load("gen_torch2.5_settings.json").source.encoding == "json");
    CHECK(load("gen_torch1.13_history.pickle").source.generation.starts_with("torch 1.13"));
    CHECK(load("gen_torch2.0_history.pickle").source.generation.starts_with("torch 2.0"));
    CHECK(load("gen_torch2.1_frames.pickle").source.generation.starts_with("torch 2.1"));
    CHECK(load("gen_torch2.9_newest.pickle").source.generation.starts_with("torch 2.9"));
    const auto list = load("gen_segments_only_list.pickle");
    CHECK(list.segments_only);
    CHECK(list.top_level_keys.empty());
    CHECK(load("gen_trailing_padding.pickle").source.trailing_bytes == 3);
}

TEST_CASE("torch 2.0 history blocks take stack and request size from history[0]" * doctest::test_suite("unit")) {
    const auto snap = snapshot::load_snapshot((fixtures_dir() / "snapshots" / "gen_torch2.0_history.pickle").string());
    CHECK(snap.has_history);
    bool any_derived = false;
    for (const auto& b : snap.blocks) any_derived |= b.address_derived;
    CHECK(any_derived);
    std::int64_t with_stack = 0;
    for (const auto& b : snap.blocks) with_stack += b.stack != snapshot::no_stack;
    CHECK(with_stack > 0);
}

TEST_CASE("the newest generation keeps unknown actions and awaiting-free blocks" * doctest::test_suite("unit")) {
    const auto snap = snapshot::load_snapshot((fixtures_dir() / "snapshots" / "gen_torch2.9_newest.pickle").string());
    bool other = false, oom = false, annotate = false;
    for (std::size_t i = 0; i < snap.events.size(); ++i) {
        const auto& e = snap.events[i];
        other |= e.action() == snapshot::TraceAction::other && snap.action_name(i) == "user_defined";
        oom |= e.action() == snapshot::TraceAction::oom;
        annotate |= e.action() == snapshot::TraceAction::annotate;
    }
    CHECK(other);
    CHECK(oom);
    CHECK(annotate);
    bool awaiting = false;
    for (const auto& b : snap.blocks)
        awaiting |=
            snap.str(b.state_name) == "active_awaiting_free" && b.state == snapshot::BlockState::active_pending_free;
    CHECK(awaiting);
    std::set<int> devices;
    for (const auto& s : snap.segments) devices.insert(s.device);
    CHECK(devices.size() == 2);
}

TEST_CASE("a JSON dump reuses the slots of the frames and entries it replaced" * doctest::test_suite("unit")) {
    // 20000 trace entries of three frame dicts each: 100 000 containers, read with a handful
    // of slots, as a pickle is (a 2.8 GB dump held 1 GB of them before).
    std::string json = R"({"segments": [], "device_traces": [[)";
    for (int i = 0; i < 20000; ++i) {
        if (i) json += ",";
        json += fmt::format(R"({{"action": "alloc", "addr": {}, "size": 512, "stream": 0, "time_us": {}, "frames": [)",
                            4096 * (i + 1), i);
        for (int f = 0; f < 3; ++f)
            json += fmt::format(R"({}{{"filename": "/p/f{}.py", "name": "g", "line": {}}})", f ? "," : "", f, i % 7);
        json += "]}";
    }
    json += "]]}";
    snapshot::Snapshot snap;
    snapshot::detail::ModelBuilder builder(snap);
    pickle::Document doc(json);
    std::vector<std::uint64_t> reported;  // where the pages behind the parser may be released
    snapshot::detail::read_json(json, doc, &builder, {}, "dump.json",
                                [&](std::uint64_t offset) { reported.push_back(offset); });
    builder.finish(doc, "dump.json");
    CHECK(snap.events.size() == 20000);
    CHECK(snap.stacks.size() == 1 + 7);  // the empty stack and one per line
    CHECK(doc.slot_count() < 64);
    REQUIRE(reported.size() == json.size() >> 20);  // every MiB
    for (std::size_t k = 0; k < reported.size(); ++k) CHECK(reported[k] == (k + 1) << 20);
}

TEST_CASE("short strings remembered by their bytes: every byte tells two apart" * doctest::test_suite("unit")) {
    // A writer that repeats a string inline puts it at a new position each time: the builder
    // remembers short ones by content, and two strings that differ anywhere must not meet.
    snapshot::detail::ByShortText<int, 8> cache;
    std::vector<std::string> texts{""};
    for (std::size_t length = 1; length <= decltype(cache)::max_length; ++length) {
        const std::string base(length, 'a');
        texts.push_back(base);
        for (std::size_t at = 0; at < length; ++at) {
            std::string other = base;
            other[at] = 'b';
            texts.push_back(other);
        }
        texts.push_back(std::string(length - 1, 'a') + '\0');
    }
    // Each text's own value, as a string table would give it: a hit must return exactly that
    // (a collision may only make it again).
    std::map<std::string, int> id_of;
    for (const auto& text : texts) id_of.emplace(text, static_cast<int>(id_of.size()));
    REQUIRE(id_of.size() == texts.size());
    int made = 0;
    for (int round = 0; round < 3; ++round)
        for (const auto& text : texts) {
            const int value = cache.get(text, [&] {
                ++made;
                return id_of.at(text);
            });
            CHECK_MESSAGE(value == id_of.at(text), "a string of ", text.size(), " bytes took another's value");
        }
    CHECK(made < 3 * static_cast<int>(texts.size()));  // remembered, not made at every call
}

TEST_CASE("strings remembered by position in pairs: any two that meet in a pair are both kept" *
          doctest::test_suite("unit")) {
    // A trace entry's keys are looked up in turn at every entry: two of them whose positions
    // hash to one pair must both stay remembered, whether their homes are one entry or its
    // neighbour (which once overwrote each other at every miss, and so missed every time).
    constexpr unsigned bits = 8;
    const auto home = [](std::uint64_t offset) { return (offset * 0x9E3779B97F4A7C15ull) >> (64 - bits); };
    const auto text_at = [](std::uint64_t offset) {
        pickle::Value v;
        v.kind = pickle::Kind::string;
        v.length = 6;
        v.u = offset;
        return v;
    };
    const std::uint64_t first = 1000;
    std::optional<std::uint64_t> same_home, next_home, other_pair;
    for (std::uint64_t offset = first + 1; !(same_home && next_home && other_pair); ++offset) {
        if (home(offset) == home(first) && !same_home) same_home = offset;
        if (home(offset) == (home(first) ^ 1) && !next_home) next_home = offset;
        if (home(offset) / 2 != home(first) / 2 && !other_pair) other_pair = offset;
    }
    for (const auto second : {*same_home, *next_home, *other_pair}) {
        snapshot::detail::ByInputPosition<std::uint64_t, bits, 2> cache;
        int made = 0;
        for (int round = 0; round < 50; ++round)
            for (const auto offset : {first, second}) {
                const auto value = cache.get(text_at(offset), [&] {
                    ++made;
                    return offset;
                });
                CHECK(value == offset);
            }
        CHECK(made == 2);
    }
}
