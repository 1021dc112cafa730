// `trace --format perfetto`: the Chrome Trace Event Format checked for its structure (no
// viewer runs here), against the trace result it draws: the bundled OOM loop (golden), a
// copy without times (the event-index clock), every real capture with trace events, and the
// refusal by the other commands.

#include "support.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

using namespace memsnap;
using nlohmann::json;

namespace {

std::string perfetto(const analysis::TraceResult& trace) {
    analysis::Result result;
    result.value = trace;
    std::string out;
    report::write(result, report::Format::perfetto, {}, [&out](std::string_view piece) { out += piece; });
    return out;
}

std::size_t count_named(const json& events, std::string_view ph, std::string_view name) {
    return static_cast<std::size_t>(std::count_if(events.begin(), events.end(), [&](const json& e) {
        return e["ph"] == ph && e["name"].get<std::string>() == name;
    }));
}

// The document's structure, and that it draws what `trace` found.
void check_perfetto(const analysis::TraceResult& t, const std::string& text) {
    const auto doc = json::parse(text);
    REQUIRE(doc.is_object());
    REQUIRE(doc.contains("traceEvents"));
    const auto& events = doc["traceEvents"];
    REQUIRE(events.is_array());
    CHECK(doc["displayTimeUnit"] == "ms");
    const auto& other = doc["otherData"];
    REQUIRE(other.is_object());
    CHECK(other["file"] == t.file);
    CHECK(other["counter_unit"] == "bytes");
    CHECK(other.contains("memsnap_version"));
    const bool timed = t.time_first_us >= 0;
    CHECK(other["clock"] == (timed ? "time_us" : "event index"));

    const auto allocated = fmt::format("device {} allocated", t.device);
    std::map<std::string, std::int64_t> last_ts;
    std::int64_t max_allocated = -1;
    bool peak_at_its_time = false;
    const std::int64_t peak_ts = timed ? t.peak.time_us : static_cast<std::int64_t>(t.peak.event);
    std::size_t slices = 0;
    for (const auto& e : events) {
        CAPTURE(e.dump());
        REQUIRE(e.is_object());
        for (const char* key : {"name", "ph", "ts", "pid"}) CHECK(e.contains(key));
        CHECK(e["ts"].is_number_integer());
        CHECK(e["pid"] == 1);
        const std::string ph = e["ph"];
        const std::string name = e["name"];
        if (ph == "C") {
            const std::int64_t bytes = e["args"]["bytes"];
            CHECK(bytes >= 0);
            const std::int64_t ts = e["ts"];
            if (last_ts.count(name)) CHECK(ts >= last_ts[name]);
            last_ts[name] = ts;
            if (name == allocated) {
                max_allocated = std::max(max_allocated, bytes);
                peak_at_its_time = peak_at_its_time || (bytes == t.peak.bytes && ts == peak_ts);
            }
        } else if (ph == "X") {
            ++slices;
            CHECK(name == fmt::format("iteration {}", slices));
            CHECK(e["dur"].get<std::int64_t>() >= 0);
        } else if (ph == "i") {
            CHECK((e["s"] == "g" || e["s"] == "p"));
        } else {
            CHECK(ph == "M");
        }
    }
    if (!t.ordered()) return;
    CHECK(last_ts.size() == 2);  // allocated and reserved
    CHECK(max_allocated == t.peak.bytes);
    CHECK(peak_at_its_time);
    CHECK(slices == t.iterations);
    CHECK(count_named(events, "i", "OOM") == t.ooms.size());
    CHECK(count_named(events, "i", "snapshot") == t.snapshot_events.size());
    CHECK(count_named(events, "i", "peak") == 1);
    for (const auto& e : events)
        if (e["ph"] == "i" && e["name"] == "OOM") {
            CHECK(e["args"].contains("requested_bytes"));
            CHECK(e["args"].contains("device_free_bytes"));
        }
}

snapshot::Snapshot oom_loop() {
    auto s = snapshot::load_snapshot((test::fixtures_dir() / "snapshots" / "oom_loop.pickle").string());
    s.source.path = "fixtures/snapshots/oom_loop.pickle";
    return s;
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("perfetto: the OOM loop as Chrome Trace Event JSON / golden") {
        const auto t = analysis::analyze_trace(oom_loop(), {});
        REQUIRE(t.ordered());
        REQUIRE_FALSE(t.ooms.empty());
        REQUIRE(t.iterations > 0);
        const auto text = perfetto(t);
        check_perfetto(t, text);
        // The golden holds no version: a release would change it.
        const auto stable =
            std::regex_replace(text, std::regex(R"re("memsnap_version":"[^"]*")re"), R"("memsnap_version":"VERSION")");
        test::check_golden("pictures/oom_loop.perfetto.json", stable);
    }

    TEST_CASE("perfetto: a trace without times runs on the event index") {
        auto s = oom_loop();
        std::vector<snapshot::TraceEvent> events(s.events.begin(), s.events.end());
        for (auto& e : events) e.time_us = -1;
        s.events = snapshot::TraceEvents(events.begin(), events.end());
        const auto t = analysis::analyze_trace(s, {});
        REQUIRE(t.time_first_us == -1);
        const auto text = perfetto(t);
        check_perfetto(t, text);
        const auto doc = json::parse(text);
        CHECK(doc["otherData"]["ts_unit"].get<std::string>().find("no times") != std::string::npos);
    }

    TEST_CASE("perfetto: only a trace has it") {
        analysis::Result result;
        result.value = std::vector<analysis::InfoResult>{};
        CHECK_THROWS_AS(report::write(result, report::Format::perfetto, {}, [](std::string_view) {}), Error);
        CHECK(report::parse_format("perfetto") == report::Format::perfetto);
        CHECK(report::to_string(report::Format::perfetto) == "perfetto");
    }
}

TEST_SUITE("real") {
    TEST_CASE("perfetto: every real capture with trace events on each device") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t drawn = 0;
        for (const auto& path : test::files_in(test::real_dir() / "snapshots")) {
            snapshot::Snapshot snap;
            try {
                snap = snapshot::load_snapshot(path.string());
            } catch (const Error&) {
                continue;  // not a snapshot (expected.json)
            }
            std::set<int> devices;
            for (const auto& e : snap.events) devices.insert(e.device);
            for (const int device : devices) {
                CAPTURE(path.filename().string());
                CAPTURE(device);
                analysis::AnalysisOptions options;
                options.device = device;
                const auto t = analysis::analyze_trace(snap, options);
                check_perfetto(t, perfetto(t));
                ++drawn;
            }
        }
        CHECK(drawn >= 5);
    }
}

TEST_SUITE("cli") {
    TEST_CASE("perfetto: trace writes it / the other commands refuse it naming their formats") {
        const auto loop = test::quote(test::fixtures_dir() / "snapshots" / "oom_loop.pickle");
        const auto r = test::run_memsnap("trace --format perfetto " + loop);
        CHECK(r.exit_code == 0);
        const auto doc = json::parse(r.out);
        CHECK(doc["traceEvents"].is_array());
        CHECK(doc["otherData"]["memsnap_version"].get<std::string>().find('.') != std::string::npos);
        for (const char* command : {"info", "diff", "trend", "ranks"}) {
            CAPTURE(command);
            // Refused before anything is read.
            const auto files = loop + " " + loop;
            const auto refused = test::run_memsnap(fmt::format("{} --format perfetto {}", command, files));
            CHECK(refused.exit_code == 1);
            CHECK(refused.err.find("--format perfetto is for `trace`") != std::string::npos);
            CHECK(refused.err.find(fmt::format("{} takes text, json", command)) != std::string::npos);
            CHECK(refused.out.empty());
        }
    }
}
