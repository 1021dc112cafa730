// Diffs of generated pairs and series, the CI gate, and the golden reports.
#include "analysis_support.hpp"
#include "stats_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <ostream>

using namespace memsnap;
using namespace memsnap::test;  // KiB, MiB, GiB, cell()

namespace {

stats::StatsCapture fixture(const std::string& name) {
    return stats::read_stats_text(test::read_text(test::fixtures_dir() / "summaries" / name), name);
}

analysis::StatsDiff pair(const std::string& name, const std::string& after_ext = ".txt") {
    return test::stats_diff(fixture("pair_" + name + "_before.txt"), fixture("pair_" + name + "_after" + after_ext));
}

}  // namespace

TEST_CASE("stats diff: generated pairs give their verdicts" * doctest::test_suite("unit")) {
    // Two summary files show neither one process nor one workload: their levels are compared,
    // and behaviour (leak, fragmentation) is left unjudged, with the reason.
    const auto leak = pair("leak");
    CHECK(leak.comparability.same_process == analysis::Answer::unknown);
    CHECK_FALSE(leak.comparability.behaviour_allowed());
    CHECK(leak.primary().verdict == analysis::Verdict::growth);
    CHECK(std::find(leak.primary().advice.begin(), leak.primary().advice.end(), analysis::Advice::growth_summaries) !=
          leak.primary().advice.end());
    const auto frag = pair("fragmentation");
    CHECK(frag.primary().verdict == analysis::Verdict::growth);
    // Mixed kinds: a summary table (device 0) against a stats dump (device unknown).
    const auto cache = pair("cache_growth", ".json");
    CHECK(cache.before_kind == stats::CaptureKind::memory_summary);
    CHECK(cache.after_kind == stats::CaptureKind::memory_stats);
    REQUIRE(cache.devices.size() == 1);
    CHECK(cache.primary().verdict == analysis::Verdict::cache_growth);
    REQUIRE_FALSE(cache.primary().notes.empty());
    CHECK(cache.primary().notes.front().kind == analysis::FactKind::devices_paired);

    for (const auto& [name, diff] : {std::pair<std::string, const analysis::StatsDiff&>{"leak", leak},
                                     {"fragmentation", frag},
                                     {"cache_growth", cache}}) {
        test::check_golden("stats/diff_" + name + ".txt", test::render(diff, report::Format::text));
        test::check_golden("stats/diff_" + name + ".json", test::render(diff, report::Format::json));
        test::check_golden("stats/diff_" + name + ".md", test::render(diff, report::Format::markdown));
        test::check_golden("stats/diff_" + name + ".csv", test::render(diff, report::Format::csv));
    }
}

TEST_CASE("stats diff: delta of true values lies in the delta range" * doctest::test_suite("unit")) {
    // For the leak pair the truth is known: the true delta must lie within every delta range.
    const auto diff = pair("leak");
    const auto before = fixture("pair_leak_before.txt").tables[0];
    const auto after = fixture("pair_leak_after.txt").tables[0];
    for (const auto& [key, m] : diff.primary().metrics) {
        if (key == "num_ooms" || key == "num_alloc_retries") continue;
        CHECK(m.before == before.stats.at(key));
        CHECK(m.after == after.stats.at(key));
        CHECK(m.delta.low <= m.delta.high);
    }
}

TEST_CASE("stats diff: diff(a / a) is flat / diff(a / b) mirrors diff(b / a)" * doctest::test_suite("unit")) {
    const auto a = fixture("pair_leak_before.txt");
    const auto b = fixture("pair_leak_after.txt");
    const auto same = test::stats_diff(a, a);
    CHECK(same.primary().verdict == analysis::Verdict::stable);
    for (const auto& [key, m] : same.primary().metrics) CHECK(m.delta == ByteRange{0, 0});
    const auto ab = test::stats_diff(a, b);
    const auto ba = test::stats_diff(b, a);
    // Given in reverse, the cumulative counters run backwards: no known order, so no direction.
    CHECK(ba.primary().verdict == analysis::Verdict::differs);
    for (const auto& [key, m] : ab.primary().metrics) {
        const auto& r = ba.primary().metrics.at(key).delta;
        CHECK(r == ByteRange{-m.delta.high, -m.delta.low});
    }
}

TEST_CASE("stats diff: a file with three tables is a series" * doctest::test_suite("unit")) {
    const auto c = fixture("series_every_100_steps.txt");
    REQUIRE(c.tables.size() == 3);
    const auto diff = test::stats_diff(c, c, std::pair<std::int64_t, std::int64_t>{100, 300});
    REQUIRE(diff.devices.size() == 1);
    const auto& d = diff.devices[0];
    REQUIRE(d.series.size() == 3);
    CHECK(d.series[0].step == 100);
    CHECK(d.series[1].step == 200);
    CHECK(d.series[2].step == 300);
    CHECK(d.series[2].line == c.tables[2].line);
    const auto& trend = d.trends.at("allocated_bytes.all.current");
    CHECK(trend.direction == analysis::Direction::rising);
    CHECK(trend.monotone);
    CHECK(trend.slope_unit == analysis::SlopeUnit::per_step);
    // 256 MiB per 100 steps → about 2.56 MiB per step.
    const auto& m = d.metrics.at("allocated_bytes.all.current");
    REQUIRE(m.per_step.has_value());
    CHECK(m.per_step->contains(512 * MiB / 200));
    CHECK(d.verdict == analysis::Verdict::leak);

    // Gate: growth certainly above 2 MiB/step, not certainly above 3 MiB/step.
    CHECK(test::gate(diff, 2 * MiB).has_value());
    CHECK_FALSE(test::gate(diff, 3 * MiB).has_value());

    // Without --steps the log's step lines give them, as trend reads them.
    const auto from_lines = test::stats_diff(c, c);
    CHECK(from_lines.steps.source == "log lines");
    CHECK(from_lines.steps.span == std::pair<std::int64_t, std::int64_t>{100, 300});
    CHECK(from_lines.devices[0].series[1].step == 200);
    CHECK(from_lines.devices[0].metrics.at("allocated_bytes.all.current").per_step == m.per_step);

    // Steps unknown (a log without step lines): per capture.
    auto unstepped = c;
    for (auto& t : unstepped.tables) t.step.reset();
    const auto per_capture = test::stats_diff(unstepped, unstepped);
    CHECK(per_capture.devices[0].trends.at("allocated_bytes.all.current").slope_unit ==
          analysis::SlopeUnit::per_capture);
    CHECK_FALSE(per_capture.devices[0].metrics.at("allocated_bytes.all.current").per_step.has_value());
    CHECK(test::gate(per_capture, 200 * MiB).has_value());
    CHECK_FALSE(test::gate(per_capture, 300 * MiB).has_value());

    test::check_golden("stats/series_diff.txt", test::render(diff, report::Format::text));
    test::check_golden("stats/series_diff.json", test::render(diff, report::Format::json));
    test::check_golden("stats/series_diff.md", test::render(diff, report::Format::markdown));
}

TEST_CASE("stats diff: a log of more tables than are listed renders the listed points" * doctest::test_suite("unit")) {
    // 2500 tables, allocated rising by 1 MiB each: 1000 points are listed, first and last kept.
    std::string log;
    for (int i = 0; i < 2500; ++i) log += fmt::format("|Allocated memory|{} MiB|{} MiB|1 B|1 B|\n", 100 + i, 100 + i);
    const auto c = stats::read_stats_text(log, "train.log");
    REQUIRE(c.tables.size() == 2500);
    const auto diff = test::stats_diff(c, c);
    const auto& d = diff.devices.at(0);
    REQUIRE(d.series.size() == 1000);
    CHECK(d.series.back().index == 2499);
    const auto& trend = d.trends.at("allocated_bytes.all.current");
    CHECK(trend.values.size() == d.series.size());
    CHECK(trend.values.back().low == 2599 * MiB);
    // The last table's value, where the series is listed.
    for (const auto format : {report::Format::text, report::Format::markdown})
        CHECK(test::render(diff, format).find("2599 MiB") != std::string::npos);
    CHECK(test::render(diff, report::Format::json).find(std::to_string(2599 * MiB)) != std::string::npos);
}

TEST_CASE("stats diff: devices are paired / bad steps and formats are refused" * doctest::test_suite("unit")) {
    const auto c = fixture("two_devices.txt");
    const auto diff = test::stats_diff(c, c);
    REQUIRE(diff.devices.size() == 2);
    CHECK(diff.devices[0].device == 0);
    CHECK(diff.devices[1].device == 1);
    // Folded stacks need snapshots: summaries have none.
    CHECK_THROWS_AS(test::render(diff, report::Format::folded), Error);
    // A table cut short holds allocated but not reserved memory: it diffs on what both hold
    // and names the rest.
    const auto partial = test::stats_diff(fixture("cut_short.txt"), fixture("layout_torch2.0.txt"));
    const auto& p = partial.primary();
    CHECK(p.metrics.count("allocated_bytes.all.current") == 1);
    CHECK(std::find(p.missing.begin(), p.missing.end(), "reserved_bytes.all.current") != p.missing.end());
    // Nothing in common at all is an input error.
    stats::StatsCapture empty_rows = fixture("cut_short.txt");
    empty_rows.tables[0].stats.clear();
    CHECK_THROWS_AS(test::stats_diff(empty_rows, fixture("layout_torch2.0.txt")), Error);
}

TEST_CASE("stats info: goldens" * doctest::test_suite("unit")) {
    for (const auto* name :
         {"layout_torch2.0.txt", "cut_short.txt", "two_devices.txt", "stats_nested.json", "fork_npu.txt"}) {
        const auto c = fixture(name);
        const auto stem = std::filesystem::path(name).stem().string();
        test::check_golden(fmt::format("stats/info_{}.json", stem), test::render(c, report::Format::json));
        test::check_golden(fmt::format("stats/info_{}.txt", stem), test::render(c));
    }
}

TEST_CASE("stats diff: a long series is listed at 1000 points / its trend judged on all" *
          doctest::test_suite("unit")) {
    stats::StatsCapture log;
    log.file = "train.log";
    for (int i = 0; i < 1500; ++i) {
        stats::StatsTable t;
        t.device = 0;
        t.line = static_cast<std::size_t>(1 + 50 * i);
        // Rising except one dip near the end, between two listed points: the trend is mixed.
        const std::int64_t value = i == 1498 ? 10 : std::int64_t{1000} * (i + 1);
        t.stats.set("allocated_bytes.all.current", ByteRange::exact(value));
        t.stats.set("reserved_bytes.all.current", ByteRange::exact(std::int64_t{1} << 30));
        log.tables.push_back(std::move(t));
    }
    const auto diff = test::stats_diff(log, log);
    const auto& d = diff.primary();
    REQUIRE(d.series.size() == 1000);
    CHECK(d.series.front().index == 0);
    CHECK(d.series.back().index == 1499);
    const auto& trend = d.trends.at("allocated_bytes.all.current");
    CHECK(trend.values.size() == 1000);
    CHECK(trend.direction == analysis::Direction::mixed);
    CHECK(trend.first_to_last == ByteRange::exact(1500 * 1000 - 1000));
    bool noted = false;
    for (const auto& n : d.notes) noted = noted || n.find("a series of 1500 tables: 1000 evenly spaced points") == 0;
    CHECK(noted);
}

TEST_CASE("stats info: --top keeps the first and last tables of a series" * doctest::test_suite("unit")) {
    std::string text;
    for (int i = 0; i < 7; ++i)
        text += fmt::format("| Allocated memory      | {:>6} MiB |   5245 MiB |   1149 GiB |   1144 GiB |\n\nstep\n\n",
                            i + 1);
    const capture::Capture c{"s.log", stats::read_stats_text(text, "s.log")};
    analysis::AnalysisOptions options;
    options.top = 4;
    const auto info = std::get<analysis::StatsInfo>(analysis::info(c, options));
    CHECK(info.tables_total() == 7);
    REQUIRE(info.capture.tables.size() == 4);
    CHECK(info.omitted == 3);
    CHECK(info.table_number(1) == 2);
    CHECK(info.table_number(2) == 6);
    CHECK(info.capture.tables[2].stats.at("allocated_bytes.all.current").low == 6 * MiB);
    const auto text_out = report::render(analysis::InfoResult(info), report::Format::text, {});
    CHECK(text_out.find("tables not shown  3  --top 0 lists all") != std::string::npos);
}
