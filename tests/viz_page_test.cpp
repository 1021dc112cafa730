// torch 2.0 _memory_viz trace_plot pages (alloc_data, replayed) and newer pages listing several
// snapshots. Fixtures: fixtures/gen_viz_pages.py.

#include "support.hpp"

#include <memsnap/capture/capture.hpp>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

namespace {

std::string viz(const std::string& name) { return (memsnap::test::fixtures_dir() / "viz" / name).string(); }

nlohmann::json trace_json(const std::string& file) {
    const auto r = memsnap::test::run_memsnap("trace --format json " + file);
    REQUIRE(r.exit_code == 0);
    return nlohmann::json::parse(r.out);
}

nlohmann::json expected() {
    std::ifstream in(viz("old_trace_plot.json"));
    return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("old trace_plot page: trace gives the known peak / end state / sites" * doctest::test_suite("cli")) {
    const auto want = expected();
    const auto capture = memsnap::capture::load_capture(viz("old_trace_plot.html"), {});
    REQUIRE(capture.is_snapshot());
    const auto& snap = capture.snapshot();
    CHECK(snap.events.size() == want["events"].get<std::size_t>());
    CHECK(snap.segments.size() == 1);
    CHECK(snap.segments[0].placeholder);
    std::int64_t live = 0;
    for (const auto& b : snap.blocks) live += b.live() ? b.size : 0;
    CHECK(live == want["end_bytes"].get<std::int64_t>());
    CHECK(snap.blocks.size() == want["end_blocks"].get<std::size_t>());
    for (const auto& e : snap.events) CHECK(e.time_us == -1);

    const auto page = memsnap::test::run_memsnap("trace " + viz("old_trace_plot.html"));
    REQUIRE(page.exit_code == 0);
    CHECK(page.out.find("Peak 16.00 MiB allocated") != std::string::npos);
    CHECK(page.err.find("no reserved memory (segments), times, device or OOMs") != std::string::npos);
    for (const auto& site : want["sites"]) {
        const auto s = site.get<std::string>();
        const auto file = s.substr(0, s.find(':'));
        CHECK(page.out.find(file) != std::string::npos);
    }
    // The same sequence as a pickle: the same trace text past the first line.
    const auto pickle = memsnap::test::run_memsnap("trace " + viz("old_trace_plot_same.pickle"));
    REQUIRE(pickle.exit_code == 0);
    CHECK(page.out.substr(page.out.find('\n')) == pickle.out.substr(pickle.out.find('\n')));
    const auto a = trace_json(viz("old_trace_plot.html"));
    const auto b = trace_json(viz("old_trace_plot_same.pickle"));
    CHECK(a.dump().find(std::to_string(want["peak_bytes"].get<std::int64_t>())) != std::string::npos);
    CHECK(b.dump().find(std::to_string(want["peak_bytes"].get<std::int64_t>())) != std::string::npos);
}

TEST_CASE("old trace_plot page: info works and says reserved was not recorded" * doctest::test_suite("cli")) {
    const auto r = memsnap::test::run_memsnap("info " + viz("old_trace_plot.html"));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("trace_plot page") != std::string::npos);
    CHECK(r.out.find("no reserved memory") != std::string::npos);
    CHECK(r.out.find("allocated          8.50 MiB") != std::string::npos);
}

TEST_CASE("malformed old trace_plot pages: exit 2 with a one-line error naming the file" * doctest::test_suite("cli")) {
    for (const char* name : {"fail_old_truncated.html", "fail_old_bad_index.html", "fail_old_tables_disagree.html",
                             "fail_old_negative_size.html", "fail_old_third_action.html"}) {
        CAPTURE(name);
        for (const char* command : {"trace ", "info "}) {
            const auto r = memsnap::test::run_memsnap(command + viz(name));
            CHECK(r.exit_code == 2);
            CHECK(r.err.find(name) != std::string::npos);
            CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        }
    }
    CHECK(memsnap::test::run_memsnap("info " + viz("fail_old_truncated.html")).err.find("byte ") != std::string::npos);
}

TEST_CASE("a page with two snapshots: the first is read and the warning names the other" * doctest::test_suite("cli")) {
    const auto r = memsnap::test::run_memsnap("info " + viz("two_snapshots.html"));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("the page holds 2 snapshots") != std::string::npos);
    CHECK(r.out.find("\"step2.pickle\"") != std::string::npos);
    const auto capture = memsnap::capture::load_capture(viz("two_snapshots.html"), {});
    CHECK(capture.snapshot().events.size() == 9);
}

TEST_CASE("old trace_plot page: a huge actions array is refused quickly" * doctest::test_suite("cli")) {
    std::string page =
        "<!DOCTYPE html><script>let alloc_data = {\"elements_size\": [512], \"elements_info\": [null], "
        "\"suffix_table\": [], \"string_table\": [], \"initially_allocated\": [], \"actions\": [";
    for (int i = 0; i < 2'000'000; ++i) page += "0,";
    page += "0]}\n</script>";
    const auto path = std::filesystem::temp_directory_path() / "memsnap_huge_actions.html";
    std::ofstream(path) << page;
    const auto r = memsnap::test::run_memsnap("trace " + path.string());
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("a third time") != std::string::npos);
    std::filesystem::remove(path);
}
