// The command line as users and scripts meet it: exit codes, error lines, output formats.

#include "support.hpp"

#include "analysis_support.hpp"

#include <memsnap/analysis/totals.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/snapshot/load.hpp>

#include <nlohmann/json.hpp>

#include <regex>

using namespace memsnap;

TEST_CASE("exit codes: 0 success / 1 usage / 2 unreadable input" * doctest::test_suite("cli")) {
    const auto fixture = test::quote(test::fixtures_dir() / "snapshots" / "gen_torch2.5_settings.pickle");
    CHECK(test::run_memsnap("info " + fixture).exit_code == 0);
    CHECK(test::run_memsnap("--help").exit_code == 0);
    CHECK(test::run_memsnap("--version").exit_code == 0);
    const auto usage = test::run_memsnap("info " + fixture + " --format yaml");
    CHECK(usage.exit_code == 1);
    CHECK(test::run_memsnap("").exit_code == 1);
    CHECK(test::run_memsnap("frobnicate").exit_code == 1);
    const auto missing = test::run_memsnap("info /nonexistent/capture.pickle");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err == "memsnap: error: /nonexistent/capture.pickle: cannot open: No such file or directory\n");
    const auto dir = test::run_memsnap("info " + test::quote(test::fixtures_dir()));
    CHECK(dir.exit_code == 2);
}

TEST_CASE("errors on binary input name the file and the byte offset on one line" * doctest::test_suite("cli")) {
    const auto path = test::fixtures_dir() / "malformed" / "fail_unknown_opcode.pickle";
    const auto result = test::run_memsnap("info " + test::quote(path));
    CHECK(result.exit_code == 2);
    CHECK(result.out.empty());
    CHECK(std::regex_match(result.err, std::regex("memsnap: error: .*fail_unknown_opcode\\.pickle: "
                                                  "byte [0-9]+: unknown opcode 0xff\n")));
}

TEST_CASE("info --format json has the public keys" * doctest::test_suite("cli")) {
    const auto path = test::fixtures_dir() / "snapshots" / "gen_torch2.9_newest.pickle";
    const auto result = test::run_memsnap("info --format json " + test::quote(path));
    REQUIRE(result.exit_code == 0);
    const auto j = nlohmann::json::parse(result.out);
    CHECK(j.at("schema_version") == 1);
    CHECK(j.at("kind") == "snapshot");
    for (const char* key : {"segments", "blocks", "devices", "reserved_bytes", "allocated_bytes",
                            "active_bytes", "inactive_bytes", "requested_bytes", "blocks_by_state",
                            "blocks_with_frames", "trace_events_by_action", "top_sites",
                            "internal_waste_bytes", "external_fragmentation_bytes"})
        CHECK(j.contains(key));
}

TEST_CASE("standard input is read with '-'" * doctest::test_suite("cli")) {
    const auto path = test::fixtures_dir() / "snapshots" / "gen_torch2.1_frames.pickle";
    const auto piped = test::run_memsnap("info --format json -", "", path.string());
    REQUIRE(piped.exit_code == 0);
    CHECK(nlohmann::json::parse(piped.out).at("segments") == 7);
}

TEST_CASE("golden: info text and json" * doctest::test_suite("unit")) {
    for (const char* name : {"gen_torch2.5_settings.pickle", "gen_torch2.0_history.pickle",
                             "gen_torch2.9_newest.pickle"}) {
        const std::string relative = std::string("fixtures/snapshots/") + name;
        const io::MappedFile file((test::source_dir() / relative).string());
        const auto snap = snapshot::load_snapshot_bytes(file.bytes(), relative);
        const auto summary = test::describe(snap);
        test::check_golden(std::string("info/") + name + ".txt", test::render(summary));
        test::check_golden(std::string("info/") + name + ".json", test::render_json(summary));
    }
}

TEST_CASE("site rules: user code / overrides / and bad regexes" * doctest::test_suite("cli")) {
    const auto path = test::fixtures_dir() / "snapshots" / "gen_torch2.5_settings.pickle";
    const auto snap = snapshot::load_snapshot(path.string());
    const auto summary = test::describe(snap);
    REQUIRE(!summary.top_sites.empty());
    for (const auto& site : summary.top_sites) {
        if (!site.site.user_code) continue;
        CHECK(site.site.filename.find("site-packages") == std::string::npos);
        CHECK(site.site.filename.find("/torch/") == std::string::npos);
    }
    analysis::AnalysisOptions everything_is_library;
    everything_is_library.rules.not_user_code = {"."};
    const auto no_user = test::describe(snap, everything_is_library);
    for (const auto& site : no_user.top_sites) CHECK_FALSE(site.site.user_code);
    analysis::AnalysisOptions broken;
    broken.rules.user_code = {"(["};
    CHECK_THROWS_AS(test::describe(snap, broken), Error);
    CHECK(test::run_memsnap("--user-code '([' info " + test::quote(path)).exit_code == 1);
}

TEST_CASE("CLI on memory_summary and memory_stats captures" * doctest::test_suite("cli")) {
    const auto fixtures = test::fixtures_dir() / "summaries";
    const auto info = test::run_memsnap("info --format json " + test::quote(fixtures / "stats_flat.json"));
    REQUIRE(info.exit_code == 0);
    CHECK(nlohmann::json::parse(info.out).at("kind") == "memory_stats");
    const auto no_table = test::run_memsnap("info " + test::quote(test::source_dir() / "CMakeLists.txt"));
    CHECK(no_table.exit_code == 2);
    CHECK(no_table.err.find("no memory_summary table") != std::string::npos);
    const auto two = test::quote(fixtures / "two_devices.txt");
    const auto device1 = test::run_memsnap("diff --format json --device 1 " + two + " " + two);
    REQUIRE(device1.exit_code == 0);
    const auto d1 = nlohmann::json::parse(device1.out);
    CHECK(d1.at("devices").size() == 1);
    // A device the tables do not hold is unreadable input (exit 2), naming the devices they hold.
    const auto device7 = test::run_memsnap("diff --device 7 " + two + " " + two);
    CHECK(device7.exit_code == 2);
    CHECK(device7.err.find("devices 0, 1 only") != std::string::npos);
    const auto mixed = test::run_memsnap(
        "diff " + test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle") + " " +
        test::quote(fixtures / "stats_flat.json"));
    CHECK(mixed.exit_code == 1);
    if (!test::have_real()) return;
    const auto real = test::real_dir() / "summaries";
    const auto table = test::run_memsnap("info --format json " +
                                         test::quote(real / "comfyui-docker-log_torch2.8_cudaMallocAsync.txt"));
    REQUIRE(table.exit_code == 0);
    const auto t = nlohmann::json::parse(table.out);
    CHECK(t.at("kind") == "memory_summary");
    CHECK(t.at("tables").at(0).at("stats").at("allocated_bytes.all.current").at("low") == 3116ll << 20);
    const auto diff = test::run_memsnap("diff --format json " + test::quote(real / "gpt-neo-generation_pair_before.txt") +
                                        " " + test::quote(real / "gpt-neo-generation_pair_after.txt"));
    REQUIRE(diff.exit_code == 0);
    const auto d = nlohmann::json::parse(diff.out);
    CHECK(d.at("kind") == "summary_diff");
    const auto& allocated = d.at("metrics").at("allocated_bytes.all.current").at("delta");
    CHECK(allocated.at("low") == (7ll << 20) + 1);
    CHECK(allocated.at("high") == (9ll << 20) - 1);
    const auto& reserved = d.at("metrics").at("reserved_bytes.all.current").at("delta");
    CHECK(reserved.at("low") == (137ll << 20) + 1);
    CHECK(reserved.at("high") == (139ll << 20) - 1);
    CHECK(d.at("verdict") == "cache_growth");
    for (const char* format : {"text", "markdown", "csv"})
        CHECK(test::run_memsnap("diff --format " + std::string(format) + " " +
                                test::quote(real / "gpt-neo-generation_pair_before.txt") + " " +
                                test::quote(real / "gpt-neo-generation_pair_after.txt"))
                  .exit_code == 0);
}
