// `trend` (growth over many captures) and `ranks` (one capture per rank): series built from
// real captures and bundled fixtures with known changes injected, a summary log with a table
// every 100 steps, and the command line.

#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/text_reader.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

using namespace memsnap;

namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;
const std::vector<std::int64_t> kSteps = {100, 200, 300, 400, 500, 600, 700};

// Three sites beside the capture's own user code: one leaks 10 MiB per capture from the
// third capture on (after two intervals of warm-up), one grows once by 50 MiB at the
// fourth, one comes and goes (30 MiB in every other capture).
struct Injected {
    std::string leak, once, sawtooth;  // their files
};

std::optional<snapshot::StackId> user_stack(const snapshot::Snapshot& snap, std::string& dir) {
    analysis::StackIndex index({&snap}, {}, {});
    for (const auto& b : snap.blocks) {
        if (!b.live() || b.stack == snapshot::no_stack) continue;
        const auto site = index.site(index.stack(0, b.stack));
        const auto category = index.category(0, b.stack);
        if (!site.user_code || analysis::is_one_time(category) || category == analysis::Category::parameter) continue;
        dir = site.filename.substr(0, site.filename.find_last_of("/\\") + 1);
        return b.stack;
    }
    return std::nullopt;
}

// The seven captures, as snapshots.
std::vector<snapshot::Snapshot> snapshots_of(const snapshot::Snapshot& base, Injected& names) {
    std::string dir;
    const auto under = user_stack(base, dir);
    REQUIRE(under.has_value());
    names = {dir + "leaky.py", dir + "optim_setup.py", dir + "batch_cache.py"};
    std::vector<snapshot::Snapshot> out;
    for (std::size_t i = 0; i < kSteps.size(); ++i) {
        auto snap = base;
        const auto leak = test::stack_with_frame(snap, *under, names.leak, 12, "remember");
        const auto once = test::stack_with_frame(snap, *under, names.once, 30, "init_state");
        const auto saw = test::stack_with_frame(snap, *under, names.sawtooth, 7, "fill");
        if (i >= 2) test::inject_blocks(snap, leak, MiB, 10 * static_cast<int>(i - 1), 0x7f0000000000);
        if (i >= 3) test::inject_blocks(snap, once, 50 * MiB, 1, 0x7f4000000000);
        if (i % 2 == 1) test::inject_blocks(snap, saw, 3 * MiB, 10, 0x7f8000000000);
        out.push_back(std::move(snap));
    }
    return out;
}

std::vector<analysis::SeriesCapture> series_of(const snapshot::Snapshot& base, Injected& names) {
    std::vector<analysis::SeriesCapture> out;
    analysis::AnalysisOptions every;
    every.top = 0;
    const auto snaps = snapshots_of(base, names);
    for (std::size_t i = 0; i < snaps.size(); ++i)
        out.push_back({fmt::format("run_step{}.pickle", kSteps[i]), analysis::describe_snapshot(snaps[i], every)});
    return out;
}

const analysis::TrendSite* site_in(const analysis::TrendResult& t, const std::string& file) {
    for (const auto& s : t.sites)
        if (s.site.filename == file) return &s;
    return nullptr;
}

void check_three_changes(const analysis::TrendResult& t, const Injected& names) {
    CHECK(t.steps == kSteps);
    CHECK(t.steps_source == "file names");
    CHECK(t.verdict == analysis::Verdict::leak);
    REQUIRE_FALSE(t.sites.empty());
    const auto& top = t.sites.front();
    CHECK(top.site.filename == names.leak);
    CHECK(top.fit.verdict == analysis::Verdict::leak);
    // 10 MiB more every 100 steps after warm-up: exactly 104857.6 bytes per step.
    CHECK(top.fit.slope_bytes_per_step == doctest::Approx(10 * MiB / 100.0).epsilon(1e-12));
    CHECK(top.fit.r2 == doctest::Approx(1.0));
    CHECK(top.fit.first_step == 300);
    CHECK(top.bytes_by_step.back() == 50 * MiB);
    CHECK(top.blocks_by_step.back() == 50);
    const auto* once = site_in(t, names.once);
    REQUIRE(once != nullptr);
    CHECK(once->fit.verdict == analysis::Verdict::one_time_growth);
    const auto* saw = site_in(t, names.sawtooth);
    REQUIRE(saw != nullptr);
    CHECK(saw->fit.verdict == analysis::Verdict::sawtooth);
    for (const auto& s : t.sites) {
        CAPTURE(s.site.label());
        if (s.site.filename != names.leak) CHECK(s.fit.verdict != analysis::Verdict::leak);
    }
}

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("trend: a leak after warm-up / one-time growth and a sawtooth in a series of real training steps") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        for (const char* name : {"nothanmin-a2_train_step.pickle", "kkaitlyn111-a2_small_forward_compiled.pickle",
                                 "yiyi-llm-inference_opt1.3b_torch2.0.pickle"}) {
            CAPTURE(name);
            const auto base = snapshot::load_snapshot((test::real_dir() / "snapshots" / name).string());
            Injected names;
            analysis::AnalysisOptions options;
            options.top = 0;
            const auto t = analysis::trend_snapshots(series_of(base, names), options, {{}, 2});
            check_three_changes(t, names);
        }
    }

    TEST_CASE("trend: shared trace events of a long trace are counted in a sample and say so") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // A series keeps a sample of each trace (one event in 64 by hash): the count of shared
        // events is of that sample, which the fact says; a diff walks every event.
        const auto snap =
            snapshot::load_snapshot((test::real_dir() / "snapshots" / "nothanmin-a2_train_step.pickle").string());
        std::vector<analysis::SeriesCapture> series;
        for (int i = 0; i < 3; ++i)
            series.push_back({fmt::format("step{}.pickle", i), analysis::describe_snapshot(snap, {})});
        const auto t = analysis::trend_snapshots(std::move(series), {}, {{1, 2, 3}, 0});
        const auto shared =
            std::find_if(t.comparability.process_evidence.begin(), t.comparability.process_evidence.end(),
                         [](const analysis::Fact& f) { return f.kind == analysis::FactKind::traces_share_events; });
        REQUIRE(shared != t.comparability.process_evidence.end());
        CHECK(shared->is("sampled"));
        const auto events = static_cast<std::int64_t>(snap.events.size());
        CHECK(shared->integer("events") > 0);
        CHECK(shared->integer("events") < events / 16);
        analysis::AnalysisOptions options;
        const auto d = analysis::diff_snapshots(snap, snap, options);
        const auto whole =
            std::find_if(d.comparability.process_evidence.begin(), d.comparability.process_evidence.end(),
                         [](const analysis::Fact& f) { return f.kind == analysis::FactKind::traces_share_events; });
        REQUIRE(whole != d.comparability.process_evidence.end());
        CHECK_FALSE(whole->is("sampled"));
        CHECK(whole->integer("events") == events);
    }

    TEST_CASE("ranks: one rank of four real captures holds an injected allocation") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto base =
            snapshot::load_snapshot((test::real_dir() / "snapshots" / "nothanmin-a2_train_step.pickle").string());
        std::string dir;
        const auto under = user_stack(base, dir);
        REQUIRE(under.has_value());
        std::vector<analysis::RankCapture> ranks;
        for (int r = 0; r < 4; ++r) {
            // Each rank on its own node: another Python install (site-packages moves), other addresses.
            auto snap = test::make_variant(base, {test::rerun_paths(""), std::int64_t{r} << 36, 0, std::nullopt});
            if (r == 2) {
                const auto extra = test::stack_with_frame(snap, *under, dir + "cache.py", 44, "keep_batch");
                test::inject_blocks(snap, extra, 8 * MiB, 12, 0x7f0000000000);
            }
            analysis::AnalysisOptions every;
            every.top = 0;
            ranks.push_back({std::nullopt,
                             fmt::format("snapshot_rank{}.pickle", r),
                             analysis::describe_snapshot(snap, every),
                             {},
                             std::nullopt});
            ranks.back().rank = 3 - r;  // given out of order
        }
        analysis::AnalysisOptions options;
        const auto result = analysis::compare_ranks(std::move(ranks), options);
        REQUIRE(result.outliers.size() == 1);
        const auto& o = result.outliers.front();
        CHECK(o.rank == 1);  // the file of rank 2 was given rank 3 - 2
        CHECK(o.delta_bytes == 96 * MiB);
        REQUIRE_FALSE(o.sites.empty());
        CHECK(o.sites.front().site.name == "keep_batch");
        CHECK(o.sites.front().delta_bytes == 96 * MiB);
        CHECK(o.sites.size() == 1);  // the renamed checkouts are the same sites
        CHECK(result.ranks.size() == 4);
        CHECK(result.ranks.front().rank == 0);
    }

}  // TEST_SUITE("real")

TEST_SUITE("unit") {
    TEST_CASE("trend: the bundled leak fixture as a series / golden in every format") {
        auto base = snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        Injected names;
        analysis::AnalysisOptions options;
        options.top = 0;
        const auto t = analysis::trend_snapshots(series_of(base, names), options, {{}, 2});
        check_three_changes(t, names);
        test::check_golden("trend/series.txt", report::render(t, report::Format::text, {}));
        test::check_golden("trend/series.json", report::render(t, report::Format::json, {}));
        test::check_golden("trend/series.md", report::render(t, report::Format::markdown, {}));
        test::check_golden("trend/series.csv", report::render(t, report::Format::csv, {}));
        const auto j = nlohmann::json::parse(report::render(t, report::Format::json, {}));
        CHECK(j.at("kind") == "trend");
        for (const char* key : {"schema_version", "kind", "steps", "totals", "sites"}) CHECK(j.contains(key));
        for (const char* key : {"rank", "frame", "category", "slope_bytes_per_step", "r2", "monotonic_share",
                                "first_step", "verdict", "bytes_by_step", "blocks_by_step", "diagnosis"})
            CHECK(j.at("sites").at(0).contains(key));
    }

    TEST_CASE("trend SVG: the totals are drawn over the site / allocated over reserved") {
        auto base = snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        Injected names;
        const auto t = analysis::trend_snapshots(series_of(base, names), {}, {{}, 2});
        REQUIRE_FALSE(t.sites.empty());
        const auto svg = report::render_timeline_svg(t);
        // Later in the document is on top.
        const auto line = [&svg](const char* color) {
            return svg.find(fmt::format("<polyline fill=\"none\" stroke=\"{}\"", color));
        };
        const auto site = line("#3f9a4b"), reserved = line("#3b6fb6"), allocated = line("#d1495b");
        REQUIRE(site != std::string::npos);
        REQUIRE(reserved != std::string::npos);
        REQUIRE(allocated != std::string::npos);
        CHECK(site < reserved);
        CHECK(reserved < allocated);
    }

    TEST_CASE("trend: without warm-up the jump is not called a leak / fewer than three captures are refused") {
        auto base = snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        Injected names;
        analysis::AnalysisOptions options;
        const auto all = series_of(base, names);
        const auto t = analysis::trend_snapshots(all, options, {});
        // From the first capture the leak site is flat, then grows steadily: still a leak.
        CHECK(site_in(t, names.leak)->fit.verdict == analysis::Verdict::leak);
        CHECK(site_in(t, names.once)->fit.verdict == analysis::Verdict::one_time_growth);
        std::vector<analysis::SeriesCapture> two(all.begin(), all.begin() + 2);
        CHECK_THROWS_AS(analysis::trend_snapshots(two, options, {}), Error);
        CHECK_THROWS_AS(analysis::trend_snapshots(all, options, {{100, 200}, 0}), Error);  // wrong number of steps
    }

    TEST_CASE("trend: series fits by hand") {
        const std::vector<std::int64_t> x = {0, 1, 2, 3, 4};
        const auto fit = [&](std::vector<std::int64_t> y, std::vector<std::int64_t> blocks = {}) {
            return analysis::fit_series(x, y, blocks.empty() ? nullptr : &blocks, 0, 0, true);
        };
        const auto flat = fit({5, 5, 5, 5, 5});
        CHECK(flat.verdict == analysis::Verdict::stable);
        CHECK_FALSE(flat.r2_defined);  // nothing moved: no R² (null, not 1.00)
        const auto steady = fit({0, 10, 20, 30, 40});
        CHECK(steady.r2_defined);
        CHECK(steady.verdict == analysis::Verdict::leak);
        CHECK(steady.slope_bytes_per_step == doctest::Approx(10));
        CHECK(steady.r2 == doctest::Approx(1));
        CHECK(steady.first_step == 1);
        CHECK(fit({0, 0, 100, 100, 100}).verdict == analysis::Verdict::one_time_growth);
        CHECK(fit({0, 100, 0, 100, 0}).verdict == analysis::Verdict::sawtooth);
        CHECK(fit({100, 80, 60, 40, 20}).verdict == analysis::Verdict::shrink);
        CHECK(fit({10, 20, 30, 40, 50}, {4, 4, 4, 4, 4}).verdict == analysis::Verdict::shape_growth);
        const auto mixed = fit({0, 10, 5, 30, 40});  // a small dip in steady growth
        CHECK(mixed.monotonic_share == doctest::Approx(0.75));
        CHECK(mixed.verdict == analysis::Verdict::leak);
    }

    TEST_CASE("trend: a summary log with a table every 100 steps") {
        const auto path = test::fixtures_dir() / "summaries" / "series_trend_7_steps.txt";
        const auto truth = nlohmann::json::parse(test::read_text(path.string() + ".truth.json"));
        const auto capture = stats::read_stats_text(test::read_text(path), "series_trend_7_steps.txt");
        analysis::AnalysisOptions options;
        const auto t = analysis::trend_stats({capture}, options, {{}, 1});
        CHECK(t.steps_source == "log lines");
        CHECK(t.steps == truth.at("steps").get<std::vector<std::int64_t>>());
        CHECK(t.verdict == analysis::Verdict::leak);
        const auto& allocated = t.totals.front();
        CHECK(allocated.name == "allocated_bytes");
        CHECK(allocated.fit.verdict == analysis::Verdict::leak);
        // 64 MiB every 100 steps; a summary's unit offsets every value alike, so the slope is exact.
        CHECK(allocated.fit.slope_bytes_per_step == doctest::Approx(64.0 * MiB / 100).epsilon(1e-12));
        // Non-releasable memory comes and goes: a sawtooth, not a leak.
        const auto& split = t.totals.back();
        CHECK(split.name == "inactive_split_bytes");
        CHECK(split.fit.verdict == analysis::Verdict::sawtooth);
        // Without --warmup the one jump of the optimizer state dominates: not called a leak.
        const auto raw = analysis::trend_stats({capture}, options, {});
        CHECK(raw.verdict != analysis::Verdict::leak);
        test::check_golden("trend/summary_log.txt", report::render(t, report::Format::text, {}));
        test::check_golden("trend/summary_log.json", report::render(t, report::Format::json, {}));
    }

    TEST_CASE("ranks: four ranks of the bundled fixture / one with an extra allocation / golden in every format") {
        const auto base =
            snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        std::string dir;
        const auto under = user_stack(base, dir);
        REQUIRE(under.has_value());
        std::vector<analysis::RankCapture> ranks;
        for (int r = 0; r < 4; ++r) {
            auto snap = base;
            if (r == 3)
                test::inject_blocks(snap, test::stack_with_frame(snap, *under, dir + "cache.py", 44, "keep_batch"),
                                    4 * MiB, 5, 0x7f0000000000);
            analysis::AnalysisOptions every;
            every.top = 0;
            ranks.push_back({r, fmt::format("job-r{}.pickle", r), analysis::describe_snapshot(snap, every), {}, {}});
        }
        analysis::AnalysisOptions options;
        options.top = 3;
        const auto result = analysis::compare_ranks(std::move(ranks), options);
        REQUIRE(result.outliers.size() == 1);
        CHECK(result.outliers.front().rank == 3);
        CHECK(result.outliers.front().delta_bytes == 20 * MiB);
        CHECK(result.outliers.front().sites.front().site.name == "keep_batch");
        test::check_golden("ranks/four.txt", report::render(result, report::Format::text, {}));
        test::check_golden("ranks/four.json", report::render(result, report::Format::json, {}));
        test::check_golden("ranks/four.md", report::render(result, report::Format::markdown, {}));
        test::check_golden("ranks/four.csv", report::render(result, report::Format::csv, {}));
        const auto j = nlohmann::json::parse(report::render(result, report::Format::json, {}));
        CHECK(j.at("kind") == "ranks");
        for (const char* key : {"ranks", "median", "outliers"}) CHECK(j.contains(key));
        for (const char* key : {"rank", "file", "totals", "categories", "top_sites"})
            CHECK(j.at("ranks").at(0).contains(key));
        for (const char* key : {"rank", "delta_bytes", "sites"}) CHECK(j.at("outliers").at(0).contains(key));
        CHECK(j.at("outliers").at(0).at("sites").at(0).contains("frame"));
        CHECK(j.at("outliers").at(0).at("sites").at(0).at("delta_bytes") == 20 * MiB);
        // Pictures of the ranks: "rank N;site" stacks.
        const auto folded = report::render(analysis::ranks_stacks(result), report::Format::folded, {});
        test::check_golden("ranks/four.folded", folded);
        CHECK(folded.find("rank 3 (job-r3.pickle);") != std::string::npos);
    }

    TEST_CASE("ranks and steps from file names") {
        CHECK(util::rank_from_file_name("snapshot_rank3.pickle") == 3);
        CHECK(util::rank_from_file_name("rank_12_step100.pickle") == 12);
        CHECK(util::rank_from_file_name("job-r7.pickle") == 7);
        CHECK(util::rank_from_file_name("/data/rank-5/mem.pickle") == std::nullopt);  // directories do not count
        CHECK(util::rank_from_file_name("frank2.pickle") == std::nullopt);
        CHECK(util::rank_from_file_name("ctx128.pickle") == std::nullopt);
        CHECK(util::step_from_text("2024-05-01 INFO | step 100") == 100);
        CHECK(util::step_from_text("epoch 3 global_step=4500 loss 2.1") == 4500);
        CHECK(util::step_from_text("Iteration #20 done") == 20);
        CHECK(util::step_from_text("epoch 3 loss 2.1") == std::nullopt);
        CHECK(util::step_from_text("ctx128 forward") == std::nullopt);
    }

}  // TEST_SUITE("unit")

TEST_SUITE("cli") {
    TEST_CASE("trend and ranks from the command line: directories / formats / the gate and exit codes") {
        const auto dir = std::filesystem::temp_directory_path() / fmt::format("memsnap_trend_{}", ::getpid());
        std::filesystem::remove_all(dir);
        std::filesystem::create_directories(dir / "series");
        const auto base =
            snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        Injected names;
        const auto snaps = snapshots_of(base, names);
        std::vector<std::string> files;
        for (std::size_t i = 0; i < snaps.size(); ++i) {
            files.push_back((dir / "series" / fmt::format("run_step{}.json", kSteps[i])).string());
            std::ofstream(files.back()) << test::to_json(snaps[i]);
        }
        const auto json = test::run_memsnap("trend --warmup 2 --format json " + test::quote(dir / "series"));
        REQUIRE(json.exit_code == 0);
        const auto j = nlohmann::json::parse(json.out);
        CHECK(j.at("kind") == "trend");
        CHECK(j.at("steps") == nlohmann::json(kSteps));
        CHECK(j.at("verdict") == "leak");
        CHECK(j.at("sites").at(0).at("frame").at("name") == "remember");
        CHECK(j.at("sites").at(0).at("slope_bytes_per_step") == 104857.6);
        // A file given twice is said to be compared with itself.
        const auto twice = test::run_memsnap("trend " + test::quote(files[0]) + " " + test::quote(files[0]) + " " +
                                             test::quote(files[1]));
        CHECK(twice.err.find("is given 2 times: it is compared with itself") != std::string::npos);
        // --steps for one log are per table.
        const auto three_tables = dir / "log3.txt";
        std::ofstream(three_tables) << "step 100\n|Allocated memory|100 MiB|100 MiB|1 B|1 B|\n"
                                       "step 200\n|Allocated memory|200 MiB|200 MiB|1 B|1 B|\n"
                                       "step 300\n|Allocated memory|300 MiB|300 MiB|1 B|1 B|\n";
        CHECK(test::run_memsnap("trend --steps 1,2,3 " + test::quote(three_tables)).exit_code == 0);
        CHECK(test::run_memsnap("trend --steps 1,2 " + test::quote(three_tables)).exit_code == 1);
        // diff of more than two captures is the same trend.
        std::string all;
        for (const auto& f : files) all += " " + test::quote(f);
        const auto diff = test::run_memsnap("diff --format json" + all);
        REQUIRE(diff.exit_code == 0);
        CHECK(nlohmann::json::parse(diff.out).at("kind") == "trend");
        for (const char* format : {"text", "markdown", "csv"})
            CHECK(test::run_memsnap(std::string("trend --warmup 2 --format ") + format + all).exit_code == 0);
        // The gate: the leak grows 100 KiB per step.
        const auto gate = test::run_memsnap("trend --warmup 2 --fail-on-growth 64KiB" + all);
        CHECK(gate.exit_code == 3);
        CHECK(gate.err.find("leaky.py:12 remember") != std::string::npos);
        CHECK(test::run_memsnap("trend --warmup 2 --fail-on-growth 1MiB" + all).exit_code == 0);
        // Usage errors (exit 1).
        CHECK(test::run_memsnap("trend --steps 1,2" + all).exit_code == 1);
        CHECK(test::run_memsnap("trend --steps 1,2,3,4,5,7,6" + all).exit_code == 1);
        CHECK(test::run_memsnap("trend " + test::quote(files[0]) + " " + test::quote(files[1])).exit_code == 1);
        CHECK(test::run_memsnap("trend --warmup 5" + all).exit_code == 1);
        const auto summary = test::quote(test::fixtures_dir() / "summaries" / "series_trend_7_steps.txt");
        CHECK(test::run_memsnap("trend " + summary + all).exit_code == 1);
        CHECK(test::run_memsnap("ranks " + summary + " " + summary).exit_code == 1);
        // One capture of one device is no ranks: said with the file and what it holds (exit 2).
        const auto one = test::run_memsnap("ranks " + test::quote(files[0]));
        CHECK(one.exit_code == 2);
        CHECK(one.err.find(files[0] + ": ranks needs two ranks or more: the capture holds memory on one "
                                      "device (0); give one capture per rank") != std::string::npos);
        CHECK(test::run_memsnap("info --format json" + all).exit_code == 1);
        // A summary log alone is a series of its own.
        const auto log = test::run_memsnap("trend --warmup 1 --format json " + summary);
        REQUIRE(log.exit_code == 0);
        CHECK(nlohmann::json::parse(log.out).at("verdict") == "leak");
        // ranks: without ranks in the names, the order given; text lists every rank.
        const auto ranks = test::run_memsnap("ranks --format json " + test::quote(files[0]) + " " +
                                             test::quote(files[0]) + " " + test::quote(files[6]));
        REQUIRE(ranks.exit_code == 0);
        const auto r = nlohmann::json::parse(ranks.out);
        CHECK(r.at("rank_source") == "order given");
        REQUIRE(r.at("outliers").size() == 1);
        CHECK(r.at("outliers").at(0).at("rank") == 2);
        std::filesystem::remove_all(dir);
    }

}  // TEST_SUITE("cli")

TEST_SUITE("unit") {
    TEST_CASE("trend pictures: the totals over the steps and the HTML report / golden") {
        const auto path = test::fixtures_dir() / "summaries" / "series_trend_7_steps.txt";
        const auto capture = stats::read_stats_text(test::read_text(path), "series_trend_7_steps.txt");
        const auto t = analysis::trend_stats({capture}, {}, {{}, 1});
        const auto svg = report::render_timeline_svg(t);
        CHECK(svg.find("<polyline") != std::string::npos);
        test::check_golden("trend/summary_log.svg", svg);
        analysis::Result result;
        result.value = t;
        std::string html;
        report::write(result, report::Format::html, {}, [&html](std::string_view piece) { html += piece; });
        CHECK(html.find("<svg") != std::string::npos);
        test::check_golden("trend/summary_log.html", html);
    }

}  // TEST_SUITE("unit")

TEST_SUITE("unit") {
    TEST_CASE("trend: captures of different projects are compared as levels and nothing is called a leak") {
        auto base = snapshot::load_snapshot((test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle").string());
        Injected names;
        auto snaps = snapshots_of(base, names);
        analysis::AnalysisOptions every;
        every.top = 0;
        std::vector<analysis::SeriesCapture> series;
        for (std::size_t i = 0; i < snaps.size(); ++i) {
            // Every other capture from another checkout on another machine.
            const auto snap =
                i % 2 ? test::make_variant(snaps[i], {test::rerun_paths("/home/user/project/"), 0, 0, std::nullopt})
                      : snaps[i];
            series.push_back({fmt::format("run_step{}.pickle", kSteps[i]), analysis::describe_snapshot(snap, every)});
        }
        const auto t = analysis::trend_snapshots(std::move(series), {}, {{}, 2});
        CHECK(t.verdict != analysis::Verdict::leak);
        for (const auto& s : t.sites) CHECK(s.fit.verdict != analysis::Verdict::leak);
        REQUIRE_FALSE(t.warnings.empty());
        CHECK(t.comparability.same_process == analysis::Answer::no);
        CHECK(std::any_of(t.warnings.begin(), t.warnings.end(),
                          [](const auto& f) { return f.kind == analysis::FactKind::roots_differ; }));
    }

}  // TEST_SUITE("unit")
