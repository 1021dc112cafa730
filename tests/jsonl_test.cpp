// `info --format jsonl` over a directory of captures (four ranks, three steps, one rank with a
// growing site) loads into a query engine as one table: the documented query finds that rank
// and site in Debian's sqlite3, and in DuckDB from npm (@duckdb/node-api, installed beforehand).

#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/util/parallel.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>

using namespace memsnap;

namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;

// Four ranks at steps 100, 200 and 300; rank 2 keeps 2 MiB more at a site of its own each step.
std::filesystem::path write_job(const std::filesystem::path& dir) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "captures");
    const auto base =
        snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
    analysis::StackIndex index({&base}, {}, {});
    snapshot::StackId under;
    for (const auto& b : base.blocks)
        if (b.live() && index.site(index.stack(0, b.stack)).user_code) {
            under = b.stack;
            break;
        }
    for (int rank = 0; rank < 4; ++rank)
        for (int step = 100; step <= 300; step += 100) {
            auto snap = base;
            if (rank == 2) {
                const auto extra = test::stack_with_frame(snap, under, "/home/user/project/cache.py", 44, "keep_batch");
                test::inject_blocks(snap, extra, 2 * MiB, step / 100, 0x7f0000000000);
            }
            std::ofstream(dir / "captures" / fmt::format("rank{}_step{}.json", rank, step)) << test::to_json(snap);
        }
    return dir / "captures";
}

std::string run_in(const std::filesystem::path& dir, const std::string& command) {
    const auto out = dir / "query.out";
    const int status =
        std::system(fmt::format("cd '{}' && {} > '{}' 2>&1", dir.string(), command, out.string()).c_str());
    std::string text = test::read_text(out);
    if (status != 0) text = "FAILED: " + text;
    return text;
}

// The job's captures in work/captures, a note among them, and `info --format jsonl` of the
// folder, also written to work/captures.jsonl.
test::CommandResult write_jsonl(const std::filesystem::path& work) {
    const auto captures = write_job(work);
    std::ofstream(captures / "NOTES.txt") << "captured with torch 2.5 on 4 A100s\n";
    auto jsonl = test::run_memsnap("info --format jsonl " + test::quote(captures));
    std::ofstream(work / "captures.jsonl") << jsonl.out;
    return jsonl;
}

const std::filesystem::path jsonl_dir = test::source_dir() / "tests" / "jsonl";
// What the documented query finds: rank 2's growing site.
const std::string expected_growth = "2\t/home/user/project/cache.py\t44\tkeep_batch\t4194304\n";

}  // namespace

TEST_CASE("info --format jsonl: a directory of captures is one table for sqlite3" * doctest::test_suite("cli")) {
    const auto work = std::filesystem::temp_directory_path() / fmt::format("memsnap_jsonl_{}", ::getpid());
    const auto jsonl = write_jsonl(work);
    const auto captures = work / "captures";
    REQUIRE(jsonl.exit_code == 0);
    // A file in the folder that is not a capture is skipped, with a warning.
    CHECK(jsonl.err.find("warning: skipped") != std::string::npos);
    CHECK(jsonl.err.find("NOTES.txt") != std::string::npos);
    // Named, it is an error.
    CHECK(test::run_memsnap("info --format jsonl " + test::quote(captures / "NOTES.txt")).exit_code == 2);

    // Every line is one self-describing record.
    std::istringstream lines(jsonl.out);
    std::string line;
    std::size_t sites = 0, totals = 0;
    while (std::getline(lines, line)) {
        const auto j = nlohmann::json::parse(line);
        for (const char* key : {"record", "file", "rank", "step", "device"}) CHECK(j.contains(key));
        CHECK(j.value("schema_version", 0) == 2);  // as the JSON documents
        if (j.at("record") == "site") {
            ++sites;
            CHECK(j.contains("frame"));
            CHECK(j.contains("bytes"));
            CHECK(j.contains("blocks"));
        }
        if (j.at("record") == "total") ++totals;
    }
    CHECK(totals == 12 * 6);
    CHECK(sites > 12);

    // The README documents the same view and query.
    const std::string readme = test::read_text(test::source_dir() / "README.md");
    CHECK(readme.find(test::read_text(jsonl_dir / "duckdb_view.sql")) != std::string::npos);
    CHECK(readme.find(test::read_text(jsonl_dir / "top_growth.sql")) != std::string::npos);

    const auto sqlite =
        run_in(work, fmt::format("cat '{}/sqlite_view.sql' '{}/top_growth.sql' | sqlite3 :memory:", jsonl_dir.string(),
                                 jsonl_dir.string()));
    CHECK(sqlite == expected_growth);
    std::filesystem::remove_all(work);
}

TEST_CASE("info --format jsonl: a directory of captures is one table for DuckDB" * doctest::test_suite("cli")) {
    // DuckDB from npm (@duckdb/node-api), installed by the README's first command and .ci/run
    // into MEMSNAP_NODE_MODULES (build/node_modules unless configured): a test fetches nothing.
    const std::filesystem::path modules = MEMSNAP_NODE_MODULES;
    if (!test::have_program("node")) MEMSNAP_SKIP("node is not installed: the JSONL was not loaded into DuckDB");
    if (!std::filesystem::exists(modules / "@duckdb" / "node-api"))
        MEMSNAP_SKIP(modules.string() + "/@duckdb/node-api is absent (npm install --prefix " +
                     modules.parent_path().string() + " @duckdb/node-api): the JSONL was not loaded into DuckDB");
    const auto work = std::filesystem::temp_directory_path() / fmt::format("memsnap_jsonl_duckdb_{}", ::getpid());
    REQUIRE(write_jsonl(work).exit_code == 0);
    std::ofstream(work / "duckdb.sql") << test::read_text(jsonl_dir / "duckdb_view.sql")
                                       << test::read_text(jsonl_dir / "top_growth.sql");
    const auto result = run_in(
        work, fmt::format("NODE_PATH='{}' node '{}/duckdb_query.js' duckdb.sql", modules.string(), jsonl_dir.string()));
    CHECK(result == expected_growth);
    std::filesystem::remove_all(work);
}

TEST_CASE("info --format jsonl of the bundled pair and a summary log / golden" * doctest::test_suite("cli")) {
    const auto r = test::run_memsnap(
        "info --format jsonl fixtures/pairs/leak/run_step100.pickle fixtures/pairs/leak/run_step500.pickle "
        "fixtures/summaries/series_trend_7_steps.txt",
        "cd " + test::quote(test::source_dir()) + " &&");
    REQUIRE(r.exit_code == 0);
    test::check_golden("jsonl/pair_and_log.jsonl", r.out);
    // The summary's records carry the step of the log line above each table.
    CHECK(r.out.find("\"file\":\"fixtures/summaries/series_trend_7_steps.txt\",\"rank\":null,\"step\":700") !=
          std::string::npos);
}

TEST_CASE("streaming in file order: at most the window of results is held at once / every one is handed on in order" *
          doctest::test_suite("unit")) {
    constexpr std::size_t count = 300, window = 4;
    std::atomic<std::size_t> held{0}, most{0};
    std::vector<std::size_t> order;
    const auto errors = util::for_each_index_in_order(
        count, window,
        [&](std::size_t i) {
            // A slow first item: without the window the other threads would run far ahead.
            if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
            const auto now = ++held;
            for (auto seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
            }
            if (i == 7) throw std::runtime_error("seven");
        },
        [&](std::size_t i) {
            --held;
            order.push_back(i);
        });
    CHECK(most.load() <= window);
    CHECK(held.load() == 0);
    std::vector<std::size_t> expected(count);
    std::iota(expected.begin(), expected.end(), std::size_t{0});
    CHECK(order == expected);
    for (std::size_t i = 0; i < count; ++i) CHECK((errors[i] != nullptr) == (i == 7));
}

TEST_CASE("info --format jsonl of a directory of real captures: each file's records in path order" *
          doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    for (const char* kind : {"snapshots", "summaries"}) {
        const auto dir = test::real_dir() / kind;
        const auto all = test::run_memsnap("info --format jsonl " + test::quote(dir));
        REQUIRE(all.exit_code == 0);
        // Read in parallel and written as each is ready: the same bytes as each file on its own.
        std::vector<std::filesystem::path> files;
        for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
            if (entry.is_regular_file() && entry.path().filename().string().front() != '.')
                files.push_back(entry.path());
        std::sort(files.begin(), files.end());
        std::string one_by_one;
        for (const auto& file : files) {
            const auto r = test::run_memsnap("info --format jsonl " + test::quote(file));
            if (r.exit_code == 0) one_by_one += r.out;
        }
        CHECK(all.out == one_by_one);
    }
}
