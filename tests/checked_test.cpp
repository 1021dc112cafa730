// Arithmetic on numbers from files and options that would overflow: refused (exit 2) for
// sizes read from a file, a usage error (exit 1) for --steps, negative memory_stats values
// counted as 0 with a warning; comparisons of huge series exact.

#include "model_maker.hpp"
#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/range.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace memsnap;

namespace {

constexpr std::int64_t EiB = std::int64_t{1} << 60;

snapshot::TraceEvent event(snapshot::TraceAction action, std::int64_t addr, std::int64_t size, std::int64_t time_us) {
    snapshot::TraceEvent e;
    e.set_action(action);
    e.addr = addr;
    e.size = size;
    e.time_us = time_us;
    return e;
}

// A 4 KiB segment with one live block, and a trace of `events` before it.
snapshot::Snapshot traced(const std::vector<snapshot::TraceEvent>& events) {
    test::ModelMaker m;
    const auto stack = m.stack({{"/home/user/project/train.py", 12, "train_step"}});
    m.segment(0, 0x7f0000000000, {{4096, stack, true}});
    auto& s = m.model();
    s.events = {events.begin(), events.end()};
    return s;
}

std::string error_of(const snapshot::Snapshot& snap) {
    try {
        analysis::analyze_trace(snap, {}, {});
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::input);
        CHECK(e.file() == "made.pickle");
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("checked arithmetic: the one helper says when int64 would overflow" * doctest::test_suite("unit")) {
    CHECK(util::checked_add(INT64_MAX, std::int64_t{1}) == std::nullopt);
    CHECK(util::checked_add(INT64_MAX - 1, std::int64_t{1}) == INT64_MAX);
    CHECK(util::checked_sub(INT64_MIN, std::int64_t{1}) == std::nullopt);
    CHECK(util::checked_mul(std::int64_t{1} << 62, std::int64_t{2}) == std::nullopt);
    CHECK(util::checked_neg(INT64_MIN) == std::nullopt);
    CHECK(util::checked_neg(INT64_MAX) == -INT64_MAX);
    CHECK_THROWS_AS(util::or_refuse(util::checked_add(INT64_MAX, std::int64_t{1}), "sizes", "f.pickle"), Error);
    // A range that saturated to INT64_MIN divides without negating it.
    CHECK(range_divide({INT64_MIN, INT64_MIN}, 3) == ByteRange{-3074457345618258603, -3074457345618258602});
    CHECK(range_divide({-7, 7}, 2) == ByteRange{-4, 4});
}

TEST_CASE("trace: allocations / segments / frees near 2^62 to 2^63 are refused naming what overflowed" *
          doctest::test_suite("unit")) {
    using A = snapshot::TraceAction;
    const std::int64_t big = std::int64_t{1} << 62, at = 0x100000000;
    // Two live allocations of 2^62: 2^63 bytes at once ("Peak 4.00 EiB" or "0 B" before).
    CHECK(error_of(traced({event(A::alloc, at, big, 1), event(A::alloc, at + big, big, 2),
                           event(A::free_completed, at, big, 3), event(A::free_completed, at + big, big, 4)})) ==
          "the sizes of the trace's allocations overflow 64 bits (past 2^63, which no GPU holds): the file is "
          "damaged or crafted");
    // Frees of blocks allocated before the trace, as large.
    CHECK(error_of(traced({event(A::free_completed, at, big, 1), event(A::free_completed, at + big, big, 2)}))
              .find("the sizes of the trace's allocations overflow 64 bits") == 0);
    // Segments: reserved memory counted back from the snapshot passes 2^63.
    CHECK(error_of(traced({event(A::segment_alloc, at, big, 1), event(A::segment_alloc, at + big, big, 2),
                           event(A::segment_free, at, big, 3), event(A::segment_free, at + big, big, 4)}))
              .find("the bytes reserved before trace event ") == 0);
    // A segment free of -2^63 bytes cannot be negated.
    CHECK(error_of(traced({event(A::segment_free, at, INT64_MIN, 1)})).find("a trace segment event's size overflow") ==
          0);
    // Near the edge but fitting: read.
    const auto fits = traced({event(A::alloc, at, big, 1), event(A::free_completed, at, big, 2)});
    CHECK(analysis::analyze_trace(fits, {}, {}).peak.bytes == big + 4096);
}

TEST_CASE("trace from the command line: an overflowing trace is exit 2 with one line naming the file" *
          doctest::test_suite("cli")) {
    using A = snapshot::TraceAction;
    const std::int64_t big = std::int64_t{1} << 62, at = 0x100000000;
    const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_overflow_{}.json", ::getpid());
    std::ofstream(path) << test::to_json(
        traced({event(A::alloc, at, big, 1), event(A::alloc, at + big, big, 2), event(A::free_completed, at, big, 3),
                event(A::free_completed, at + big, big, 4)}));
    const auto r = test::run_memsnap("trace " + test::quote(path));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "memsnap: error: " + path.string() +
                       ": the sizes of the trace's allocations overflow 64 bits (past 2^63, which no GPU holds): "
                       "the file is damaged or crafted\n");
    std::filesystem::remove(path);
}

TEST_CASE("memory_stats: negative values are counted as 0 with a warning / max_split_size -1 stays" *
          doctest::test_suite("cli")) {
    auto text = test::read_text(test::fixtures_dir() / "summaries" / "pair_cache_growth_after.json");
    const auto set = [&](const std::string& key, const std::string& value) {
        const auto at = text.find("\"" + key + "\": ");
        REQUIRE(at != std::string::npos);
        const auto from = at + key.size() + 4, to = text.find_first_of(",\n", from);
        text.replace(from, to - from, value);
    };
    set("allocated_bytes.all.current", "-9223372036854775808");
    set("reserved_bytes.all.current", "-5");
    const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_negative_{}.json", ::getpid());
    std::ofstream(path) << text;
    const auto r = test::run_memsnap("info " + test::quote(path));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("-8.00 EiB") == std::string::npos);
    CHECK(r.out.find("2 negative size(s) were counted as 0 bytes") != std::string::npos);
    const auto json = test::run_memsnap("info --format json " + test::quote(path));
    REQUIRE(json.exit_code == 0);
    CHECK(json.out.find("negative size(s) were counted as 0 bytes") != std::string::npos);
    // Diffed against the unchanged capture: growth from 0, never from -8 EiB.
    const auto diff =
        test::run_memsnap("diff --steps 100,200 --format json " + test::quote(path) + " " +
                          test::quote(test::fixtures_dir() / "summaries" / "pair_cache_growth_after.json"));
    CHECK(diff.exit_code == 0);
    CHECK(diff.out.find("-9223372036854775808") == std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("memory_summary: a negative cell is counted as 0 with the same warning" * doctest::test_suite("cli")) {
    auto text = test::read_text(test::fixtures_dir() / "summaries" / "layout_torch2.0.txt");
    const std::string row = "| Allocated memory      | 716812 KiB |";
    const auto at = text.find(row);
    REQUIRE(at != std::string::npos);
    text.replace(at, row.size(), "| Allocated memory      | -8589934592 GiB |");
    const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_negative_{}.txt", ::getpid());
    std::ofstream(path) << text;
    const auto r = test::run_memsnap("info " + test::quote(path));
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("EiB") == std::string::npos);
    CHECK(r.out.find("1 negative size(s) were counted as 0 bytes") != std::string::npos);
    std::filesystem::remove(path);
}

TEST_CASE("trend: series of exabytes are judged exactly (80% in one interval / sawtooth sums past 2^63)" *
          doctest::test_suite("unit")) {
    const std::vector<std::int64_t> steps{1, 2, 3, 4, 5, 6, 7};
    const std::int64_t MiB = std::int64_t{1} << 20;
    // max_up * 5 passed 2^63: one jump of 2 EiB among small ups is one-time growth.
    const std::vector<std::int64_t> jump{
        0, 2 * MiB, 2 * EiB, 2 * EiB + 2 * MiB, 2 * EiB + 4 * MiB, 2 * EiB + 6 * MiB, 2 * EiB + 8 * MiB};
    CHECK(analysis::fit_series(steps, jump, nullptr, 0, 0, true, true).verdict == analysis::Verdict::one_time_growth);
    // Three ups and three downs of 4 EiB: sums of 12 EiB, memory that comes and goes.
    const std::vector<std::int64_t> saw{0, 4 * EiB, 0, 4 * EiB, 0, 4 * EiB, 0};
    CHECK(analysis::fit_series(steps, saw, nullptr, 0, 0, true, true).verdict == analysis::Verdict::sawtooth);
}

TEST_CASE("ranks: a rank 5 EiB above the others is an outlier" * doctest::test_suite("unit")) {
    const auto base =
        snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
    // Under a user frame whose category is not parameters (which would make the ranks
    // different workloads, not an outlier).
    std::optional<snapshot::StackId> under;
    analysis::StackIndex index({&base}, {}, {});
    for (const auto& b : base.blocks) {
        const auto category = index.category(0, b.stack);
        if (b.live() && b.stack != snapshot::no_stack && index.site(index.stack(0, b.stack)).user_code &&
            !analysis::is_one_time(category) && category != analysis::Category::parameter) {
            under = b.stack;
            break;
        }
    }
    REQUIRE(under.has_value());
    std::vector<analysis::RankCapture> ranks;
    for (int r = 0; r < 5; ++r) {
        auto snap = base;
        if (r == 4)
            test::inject_blocks(snap,
                                test::stack_with_frame(snap, *under, "/home/user/project/cache.py", 44, "keep_batch"),
                                EiB, 5, 0x100000000);
        analysis::AnalysisOptions every;
        every.top = 0;
        ranks.push_back({r, fmt::format("job-r{}.pickle", r), analysis::describe_snapshot(snap, every), {}, {}});
    }
    const auto result = analysis::compare_ranks(std::move(ranks), {});
    REQUIRE(result.outliers.size() == 1);
    CHECK(result.outliers.front().rank == 4);
    CHECK(result.outliers.front().delta_bytes == 5 * EiB);
}

TEST_CASE("--steps at the int64 edges: a usage error / not '(-1 steps)'" * doctest::test_suite("cli")) {
    CHECK_THROWS_AS(util::parse_steps("-9223372036854775808,9223372036854775807"), Error);
    CHECK_THROWS_AS(util::parse_step_list("-9223372036854775808,0,9223372036854775807", 3), Error);
    CHECK(util::parse_steps("-4611686018427387904,4611686018427387903").second == 4611686018427387903);
    const auto pair = test::fixtures_dir() / "pairs" / "leak";
    const auto r =
        test::run_memsnap("diff --steps -9223372036854775808,9223372036854775807 " +
                          test::quote(pair / "run_step100.pickle") + " " + test::quote(pair / "run_step500.pickle"));
    CHECK(r.exit_code == 1);
    CHECK(r.err == "memsnap: error: --steps: -9223372036854775808 and 9223372036854775807 are more than 2^63 apart\n");
}
