// The command line as users and scripts meet it: exit codes, error lines, output formats.

#include "analysis_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace memsnap;

TEST_CASE("exit codes: 0 success / 1 usage / 2 unreadable input" * doctest::test_suite("cli")) {
    const auto fixture = test::quote(test::fixtures_dir() / "snapshots" / "gen_torch2.5_settings.pickle");
    CHECK(test::run_memsnap("info " + fixture).exit_code == 0);
    CHECK(test::run_memsnap("--help").exit_code == 0);
    CHECK(test::run_memsnap("--version").exit_code == 0);
    const auto usage = test::run_memsnap("info " + fixture + " --format yaml");
    CHECK(usage.exit_code == 1);
    CHECK(test::run_memsnap("").exit_code == 1);
    const auto unknown = test::run_memsnap("frobnicate");
    CHECK(unknown.exit_code == 1);
    CHECK(unknown.err ==
          "memsnap: error: unknown command 'frobnicate': the commands are info, diff, trace, trend, ranks (memsnap "
          "--help)\n");
    CHECK(test::run_memsnap("--max-memo 536870912 info " + fixture).exit_code == 0);
    CHECK(test::run_memsnap("--max-memo 536870913 info " + fixture).exit_code == 1);  // past the 29-bit memo
    const auto missing = test::run_memsnap("info /nonexistent/capture.pickle");
    CHECK(missing.exit_code == 2);
    CHECK(missing.err == "memsnap: error: /nonexistent/capture.pickle: cannot open: No such file or directory\n");
    const auto dir = test::run_memsnap("info " + test::quote(test::fixtures_dir()));
    CHECK(dir.exit_code == 2);
}

TEST_CASE("trend DIR reads subdirectories / leaves out hidden files and a summary among snapshots" *
          doctest::test_suite("cli")) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("memsnap_dir_{}", ::getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "later");
    std::filesystem::create_directories(dir / ".cache");
    const auto pairs = test::fixtures_dir() / "pairs" / "leak";
    std::filesystem::copy_file(pairs / "run_step100.pickle", dir / "run_step100.pickle");
    std::filesystem::copy_file(pairs / "run_step500.pickle", dir / "run_step500.pickle");
    std::filesystem::copy_file(pairs / "run_step500.pickle", dir / "later" / "run_step900.pickle");
    std::filesystem::copy_file(pairs / "run_step500.pickle", dir / ".cache" / "run_step700.pickle");
    std::filesystem::copy_file(test::fixtures_dir() / "summaries" / "pair_leak_before.txt", dir / "notes.txt");
    const auto run = test::run_memsnap("trend --format json " + test::quote(dir));
    CHECK(run.exit_code == 0);
    const auto j = nlohmann::json::parse(run.out);
    CHECK(j.at("steps") == nlohmann::json::array({100, 500, 900}));
    CHECK(run.err.find("skipped " + (dir / "notes.txt").string() + ": a summary or stats file among snapshots") !=
          std::string::npos);
    // Named on the command line, a file of the other kind is an error.
    CHECK(test::run_memsnap("trend " + test::quote(dir / "run_step100.pickle") + " " +
                            test::quote(dir / "run_step500.pickle") + " " + test::quote(dir / "notes.txt"))
              .exit_code == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("trend --format folded of equal captures is empty and says so on standard error" *
          doctest::test_suite("cli")) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("memsnap_equal_{}", ::getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto capture = test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle";
    std::filesystem::copy_file(capture, dir / "run_step1.pickle");
    std::filesystem::copy_file(capture, dir / "run_step2.pickle");
    std::filesystem::copy_file(capture, dir / "run_step3.pickle");
    const auto files = test::quote(dir / "run_step1.pickle") + " " + test::quote(dir / "run_step2.pickle") + " " +
                       test::quote(dir / "run_step3.pickle");
    const auto growth = test::run_memsnap("trend --format folded " + files);
    CHECK(growth.exit_code == 0);
    CHECK(growth.out.empty());  // valid folded stacks: no line
    CHECK(growth.err.find("memsnap: warning: --format folded is empty: no site grew from " +
                          (dir / "run_step1.pickle").string() + " to " + (dir / "run_step3.pickle").string()) !=
          std::string::npos);
    // The bytes of a side are drawn, and nothing is said.
    const auto after = test::run_memsnap("trend --format folded --side after " + files);
    CHECK(after.exit_code == 0);
    CHECK_FALSE(after.out.empty());
    CHECK(after.err.find("is empty") == std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST_CASE("diff --format folded of equal captures is empty and says so on standard error" *
          doctest::test_suite("cli")) {
    const auto capture = test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle");
    const auto same = test::run_memsnap("diff --format folded " + capture + " " + capture);
    CHECK(same.exit_code == 0);
    CHECK(same.out.empty());
    CHECK(same.err.find("memsnap: warning: --format folded is empty: no stack grew from ") != std::string::npos);
    // A diff that grew draws it, and says nothing.
    const auto grew = test::run_memsnap("diff --format folded " + capture + " " +
                                        test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step500.pickle"));
    CHECK_FALSE(grew.out.empty());
    CHECK(grew.err.find("is empty") == std::string::npos);
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
    CHECK(j.at("schema_version") == 2);
    CHECK(j.at("kind") == "snapshot");
    for (const char* key :
         {"segments", "blocks", "devices", "reserved_bytes", "allocated_bytes", "active_bytes", "inactive_bytes",
          "requested_bytes", "blocks_by_state", "blocks_with_frames", "trace_events_by_action", "top_sites",
          "internal_waste_bytes", "external_fragmentation_bytes"})
        CHECK(j.contains(key));
}

TEST_CASE("standard input is read with '-'" * doctest::test_suite("cli")) {
    const auto path = test::fixtures_dir() / "snapshots" / "gen_torch2.1_frames.pickle";
    const auto piped = test::run_memsnap("info --format json -", "", path.string());
    REQUIRE(piped.exit_code == 0);
    CHECK(nlohmann::json::parse(piped.out).at("segments") == 7);
}

namespace {

// The GLIBC_TUNABLES memsnap runs with when started under `tunables` (nullptr: unset), read
// from /proc while it waits on standard input, a pipe nobody writes to yet.
std::optional<std::string> tunables_memsnap_runs_with(const char* tunables) {
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(pipe_fds[0], 0);
        ::close(pipe_fds[0]);
        ::close(pipe_fds[1]);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::dup2(null, 2);
        if (tunables)
            ::setenv("GLIBC_TUNABLES", tunables, 1);
        else
            ::unsetenv("GLIBC_TUNABLES");
        ::execl(MEMSNAP_BINARY, MEMSNAP_BINARY, "info", "-", static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(pipe_fds[0]);
    const auto proc = std::filesystem::path("/proc") / std::to_string(pid);
    // Blocked in read(2) (syscall 0 on x86-64, 63 on arm64) on the pipe: past any relaunch.
    const auto reading = [&] {
        std::ifstream syscall(proc / "syscall");
        std::string number;
        return syscall >> number && (number == "0" || number == "63");
    };
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!reading() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::optional<std::string> found;
    std::ifstream environ(proc / "environ", std::ios::binary);
    for (std::string entry; std::getline(environ, entry, '\0');)
        if (entry.starts_with("GLIBC_TUNABLES=")) found = entry.substr(15);
    ::close(pipe_fds[1]);  // end of input: memsnap exits
    int status = 0;
    ::waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    return found;
}

bool huge_pages_available() {
    std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    return std::getline(mode, line) &&
           (line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos);
}

}  // namespace

TEST_CASE("memsnap relaunches itself once with glibc's huge-page tunable / a tunable already set stays" *
          doctest::test_suite("cli")) {
    if (!std::filesystem::exists("/proc/self/syscall") || !huge_pages_available())
        MEMSNAP_SKIP("no /proc/PID/syscall or no transparent huge pages here: the relaunch cannot be seen");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    constexpr bool sanitized = true;
#elif defined(__has_feature)
    constexpr bool sanitized = __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
    constexpr bool sanitized = false;
#endif
    if (sanitized) {  // the sanitizer's allocator: nothing to tune, no relaunch
        CHECK(tunables_memsnap_runs_with(nullptr) == std::nullopt);
        return;
    }
    CHECK(tunables_memsnap_runs_with(nullptr) == "glibc.malloc.hugetlb=1");
    // Another tunable the user set is kept. (Past the first, glibc's loader cuts the variable
    // short where /proc shows it, so what is appended cannot be seen here.)
    CHECK(tunables_memsnap_runs_with("glibc.malloc.mxfast=0").value_or("").starts_with("glibc.malloc.mxfast=0"));
    CHECK(tunables_memsnap_runs_with("glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0");
}

TEST_CASE("golden: info text and json" * doctest::test_suite("unit")) {
    for (const char* name :
         {"gen_torch2.5_settings.pickle", "gen_torch2.0_history.pickle", "gen_torch2.9_newest.pickle"}) {
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
    const auto mixed =
        test::run_memsnap("diff " + test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle") + " " +
                          test::quote(fixtures / "stats_flat.json"));
    CHECK(mixed.exit_code == 1);
}

TEST_CASE("Markdown of real diffs and traces renders as written / tables after a blank line" *
          doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto snaps = test::real_dir() / "snapshots";
    const auto sums = test::real_dir() / "summaries";
    const auto q = [](const std::filesystem::path& p) { return test::quote(p); };
    for (const auto& args :
         {"diff " + q(snaps / "a0kuma-ckpt_plain.pickle") + " " + q(snaps / "a0kuma-ckpt_checkpointed.pickle"),
          "diff " + q(snaps / "silmont2000-a2_forward_fp32.pickle") + " " +
              q(snaps / "silmont2000-a2_forward_bf16.pickle"),
          "diff " + q(sums / "gpt-neo-generation_pair_before.txt") + " " +
              q(sums / "gpt-neo-generation_pair_after.txt"),
          "trace " + q(snaps / "nothanmin-a2_train_step.pickle"),
          "info " + q(snaps / "wedsonlin-a2_medium128_training.pickle"),
          "trend --steps 1,2,3 " + q(snaps / "silmont2000-a2_tiny.pickle") + " " +
              q(snaps / "silmont2000-a2_forward_fp32.pickle") + " " +
              q(snaps / "silmont2000-a2_forward_bf16.pickle")}) {
        CAPTURE(args);
        const auto run = test::run_memsnap(args + " --format markdown");
        REQUIRE(run.exit_code == 0);
        CHECK(run.out.find('|') != std::string::npos);  // tables were written
        test::check_markdown_blocks(run.out);
    }
}

TEST_CASE("CLI on real memory_summary captures" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto real = test::real_dir() / "summaries";
    const auto table = test::run_memsnap("info --format json " +
                                         test::quote(real / "comfyui-docker-log_torch2.8_cudaMallocAsync.txt"));
    REQUIRE(table.exit_code == 0);
    const auto t = nlohmann::json::parse(table.out);
    CHECK(t.at("kind") == "memory_summary");
    CHECK(t.at("tables").at(0).at("stats").at("allocated_bytes.all.current").at("low") == 3116ll << 20);
    const auto diff =
        test::run_memsnap("diff --format json " + test::quote(real / "gpt-neo-generation_pair_before.txt") + " " +
                          test::quote(real / "gpt-neo-generation_pair_after.txt"));
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
    // cudaMallocAsync counts no OOMs or retries (its table prints 0): info shows none, and a
    // diff against it compares none, as with every value that backend does not track.
    const auto async = test::run_memsnap("diff --format json " +
                                         test::quote(real / "comfyui-docker-log_torch2.8_cudaMallocAsync.txt") + " " +
                                         test::quote(real / "sglang-serving_torch2x_full.txt"));
    REQUIRE(async.exit_code == 0);
    const auto a = nlohmann::json::parse(async.out);
    CHECK(a.at("metrics").contains("allocated_bytes.all.current"));
    CHECK_FALSE(a.at("metrics").contains("num_ooms"));
    CHECK_FALSE(a.at("metrics").contains("num_alloc_retries"));
}

TEST_CASE("diff of a capture with itself: each side's out-of-memory events under its own name" *
          doctest::test_suite("cli")) {
    const auto loop = test::quote(test::fixtures_dir() / "snapshots" / "oom_loop.pickle");
    const auto r = test::run_memsnap("diff " + loop + " " + loop);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("the first capture records 1 out-of-memory event on device 0") != std::string::npos);
    CHECK(r.out.find("the second capture records 1 out-of-memory event on device 0") != std::string::npos);
}

TEST_CASE("trace from the command line: formats / options / exit codes" * doctest::test_suite("cli")) {
    const auto loop = test::quote(test::fixtures_dir() / "snapshots" / "oom_loop.pickle");
    // The OOM example the README shows, as printed, run from the checkout as the README does.
    const auto text = test::run_memsnap("trace --top 5 fixtures/snapshots/oom_loop.pickle",
                                        "cd " + test::quote(test::source_dir()) + " &&");
    REQUIRE(text.exit_code == 0);
    CHECK(text.err.empty());
    test::check_golden("trace/oom_loop.txt", text.out);
    // The README shows it as printed, up to the first live site's stack.
    const auto readme = test::read_text(test::source_dir() / "README.md");
    const auto shown = text.out.substr(0, text.out.find("        stack (6 allocations"));
    CHECK(readme.find(shown) != std::string::npos);

    const auto json = test::run_memsnap("trace --format json " + loop);
    REQUIRE(json.exit_code == 0);
    const auto j = nlohmann::json::parse(json.out);
    for (const char* key : {"schema_version", "kind", "device", "iterations", "iteration_source", "truncated", "peak",
                            "ooms", "sites", "timeline"})
        CHECK(j.contains(key));
    CHECK(j.at("kind") == "trace");
    CHECK(j.at("iterations") == 5);
    CHECK(j.at("iteration_source") == "annotations: ProfilerStep");
    CHECK(j.at("truncated") == false);
    REQUIRE(j.at("ooms").size() == 1);
    const auto& oom = j.at("ooms").at(0);
    for (const char* key : {"device", "time_us", "requested_bytes", "device_free_bytes", "allocated_bytes",
                            "reserved_bytes", "largest_free_block_bytes", "frame", "classification", "sites"})
        CHECK(oom.contains(key));
    CHECK(oom.at("classification") == "device_full");
    CHECK(oom.at("requested_bytes") == 1536ll << 20);
    CHECK(oom.at("device_free_bytes") == 200ll << 20);
    CHECK(oom.at("frame").at("name") == "forward");
    const auto& top = j.at("sites").at(0);
    for (const char* key :
         {"rank", "frame", "category", "live_allocations", "live_bytes", "per_iteration", "verdict", "stacks"})
        CHECK(top.contains(key));
    CHECK(top.at("verdict") == "leak");
    CHECK(top.at("frame").at("line") == 57);
    CHECK(top.at("per_iteration") == nlohmann::json::array({1, 1, 1, 1, 1}));

    // --device-memory turns "cannot be told" into a judgement; here the device is 4 GiB and
    // the process held 3.5 GiB of it, so it was this process that filled it.
    const auto capacity = test::run_memsnap("trace --format json --device-memory 4GiB " + loop);
    REQUIRE(capacity.exit_code == 0);
    CHECK(nlohmann::json::parse(capacity.out).at("ooms").at(0).at("classification") == "device_full");

    for (const char* format : {"markdown", "csv"}) {
        const auto r = test::run_memsnap("trace --format " + std::string(format) + " " + loop);
        CHECK(r.exit_code == 0);
        CHECK(r.out.find("train.py") != std::string::npos);
    }
    // Usage errors (exit 1): an unknown format, a bad size, a summary instead of a snapshot.
    CHECK(test::run_memsnap("trace --format yaml " + loop).exit_code == 1);
    const auto size = test::run_memsnap("trace --device-memory 12XB " + loop);
    CHECK(size.exit_code == 1);
    CHECK(size.err.find("unknown size unit") != std::string::npos);
    const auto summary =
        test::run_memsnap("trace " + test::quote(test::fixtures_dir() / "summaries" / "pair_leak_before.txt"));
    CHECK(summary.exit_code == 1);
    CHECK(summary.err.find("trace needs a snapshot") != std::string::npos);
    // Unreadable input (exit 2): no trace, a device the capture does not hold.
    const auto no_trace =
        test::run_memsnap("trace " + test::quote(test::fixtures_dir() / "snapshots" / "gen_segments_only_list.pickle"));
    CHECK(no_trace.exit_code == 2);
    CHECK(no_trace.err.find("_record_memory_history()") != std::string::npos);
    const auto device7 = test::run_memsnap("trace --device 7 " + loop);
    CHECK(device7.exit_code == 2);
    CHECK(device7.err.find("device 0 only") != std::string::npos);
    // info explains the same OOM with the same numbers.
    const auto info = test::run_memsnap("info --format json " + loop);
    REQUIRE(info.exit_code == 0);
    const auto i = nlohmann::json::parse(info.out);
    REQUIRE(i.at("ooms").size() == 1);
    CHECK(i.at("ooms").at(0).at("allocated_bytes") == oom.at("allocated_bytes"));
    CHECK(i.at("ooms").at(0).at("classification") == "device_full");
}
