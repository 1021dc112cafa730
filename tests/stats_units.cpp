// Cells, ranges, the verdict rules, and reader edge cases on small inline texts.
#include "stats/cells.hpp"
#include "stats_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/error.hpp>
#include <memsnap/stats/text_reader.hpp>
#include <memsnap/util/format.hpp>

#include <algorithm>
#include <ostream>

using namespace memsnap;
using namespace memsnap::test;  // KiB, MiB, GiB, cell()

namespace {

const char* const kTable =
    "|===========================================================================|\n"
    "|                  PyTorch CUDA memory summary, device ID 3                 |\n"
    "|---------------------------------------------------------------------------|\n"
    "|            CUDA OOMs: 1            |        cudaMalloc retries: 2         |\n"
    "|===========================================================================|\n"
    "|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |\n"
    "|---------------------------------------------------------------------------|\n"
    "| Allocated memory      |   5245 MiB |   7534 MiB |   1149 GiB |   1144 GiB |\n"
    "|---------------------------------------------------------------------------|\n"
    "| GPU reserved memory   |   8192 MiB |   9216 MiB |  12288 MiB |   4096 MiB |\n"
    "|---------------------------------------------------------------------------|\n"
    "| Allocations           |    1234    |    2345    |   98765 K  |   98764 K  |\n"
    "|---------------------------------------------------------------------------|\n"
    "| Oversize allocations  |       0    |       0    |       0    |       0    |\n"
    "|===========================================================================|\n";
}  // namespace

TEST_CASE("cells: sizes are unit-wide ranges / B exact / KB binary" * doctest::test_suite("unit")) {
    CHECK(stats::parse_size_cell("  5114 MiB ") == ByteRange{5114 * MiB, 5115 * MiB - 1});
    CHECK(stats::parse_size_cell("0 B") == ByteRange{0, 0});
    CHECK(stats::parse_size_cell("512 B ") == ByteRange{512, 512});
    CHECK(stats::parse_size_cell("146836 KB") == ByteRange{146836 * KiB, 146837 * KiB - 1});
    CHECK(stats::parse_size_cell("847 GB") == ByteRange{847 * GiB, 848 * GiB - 1});
    CHECK(stats::parse_size_cell("1234567 MiB") == ByteRange{1234567 * MiB, 1234568 * MiB - 1});
    CHECK(stats::parse_size_cell("2 TiB")->low == 2 * 1024 * GiB);
    CHECK_FALSE(stats::parse_size_cell("12 K").has_value());
    CHECK_FALSE(stats::parse_size_cell("MiB").has_value());
    CHECK_FALSE(stats::parse_size_cell("").has_value());
    CHECK_FALSE(stats::parse_size_cell("99999999 PiB").has_value());  // does not fit 64 bits
}

TEST_CASE("cells: counts with K/M are 1000-based ranges" * doctest::test_suite("unit")) {
    CHECK(stats::parse_count_cell("  1234  ") == ByteRange{1234, 1234});
    CHECK(stats::parse_count_cell("98765 K") == ByteRange{98765000, 98765999});
    CHECK(stats::parse_count_cell("3 M") == ByteRange{3000000, 3999999});
    CHECK_FALSE(stats::parse_count_cell("3 MiB").has_value());
    CHECK_FALSE(stats::parse_count_cell("x").has_value());
}

TEST_CASE("ranges: delta and division round outward" * doctest::test_suite("unit")) {
    CHECK(range_delta({5114 * MiB, 5115 * MiB - 1}, {5122 * MiB, 5123 * MiB - 1}) ==
          ByteRange{7 * MiB + 1, 9 * MiB - 1});
    CHECK(range_delta({10, 10}, {4, 4}) == ByteRange{-6, -6});
    CHECK(range_divide({-7, 7}, 2) == ByteRange{-4, 4});
    CHECK(range_divide({6, 6}, 3) == ByteRange{2, 2});
    CHECK(util::format_range({5114 * MiB, 5115 * MiB - 1}, true) == "5114 MiB (5362417664–5363466239 B)");
    CHECK(util::format_range({512, 512}, true) == "512 B");
    CHECK(util::format_range({98765000, 98765999}, false) == "98765 K (98765000–98765999)");
    CHECK(util::format_delta({8 * MiB, 8 * MiB}, true) == "+8.00 MiB");
}

namespace {

// The verdict of a pair of summaries from the rules of judge/rules.hpp, in one comparable
// workload (`behaviour`) or between captures that are not.
analysis::PairVerdict judge(const analysis::TotalsInput& in, bool behaviour = true) {
    const auto reading = analysis::read_totals(in);
    analysis::Comparability c;
    c.same_process = behaviour ? analysis::Answer::yes : analysis::Answer::no;
    analysis::PairReading r;
    r.totals = &reading;
    r.comparability = &c;
    if (in.allocated) r.allocated_threshold = analysis::noise_threshold(in.allocated->before);
    if (in.reserved) r.reserved_threshold = analysis::noise_threshold(in.reserved->before);
    return analysis::judge_pair(r);
}

bool has_fact(const analysis::Facts& facts, analysis::FactKind kind, std::string_view metric = {}) {
    return std::any_of(facts.begin(), facts.end(), [&](const analysis::Fact& f) {
        return f.kind == kind && (metric.empty() || f.word("metric") == metric);
    });
}

}  // namespace

TEST_CASE("verdict: the totals read by the table of leak-patterns.md on exact values" * doctest::test_suite("unit")) {
    auto input = [](std::int64_t alloc, std::int64_t reserved, std::int64_t inactive) {
        analysis::TotalsInput in;
        in.allocated = analysis::MetricChange{ByteRange::exact(4 * GiB), ByteRange::exact(alloc)};
        in.reserved = analysis::MetricChange{ByteRange::exact(5 * GiB), ByteRange::exact(reserved)};
        in.non_releasable = analysis::MetricChange{ByteRange::exact(100 * MiB), ByteRange::exact(inactive)};
        return in;
    };
    using analysis::Verdict;
    CHECK(judge(input(GiB, GiB, 0)).verdict == Verdict::leak);
    CHECK(judge(input(GiB, 0, 0)).verdict == Verdict::leak);
    CHECK(judge(input(0, GiB, 500 * MiB)).verdict == Verdict::fragmentation);
    CHECK(judge(input(0, GiB, 0)).verdict == Verdict::cache_growth);
    CHECK(judge(input(0, 0, 0)).verdict == Verdict::stable);
    CHECK(judge(input(-GiB, -GiB, 0)).verdict == Verdict::shrink);
    // 0.5% of 4 GiB ≈ 20.5 MiB: +20 MiB is noise, +21 MiB is growth.
    CHECK(analysis::noise_threshold(ByteRange::exact(4 * GiB)) == 4 * GiB / 200);
    CHECK(analysis::noise_threshold(ByteRange::exact(10 * MiB)) == MiB);
    CHECK(judge(input(20 * MiB, 0, 0)).verdict == Verdict::stable);
    CHECK(judge(input(21 * MiB, 0, 0)).verdict == Verdict::leak);
    // As many live allocations as before, holding more bytes: shape growth, in any pair.
    auto same_count = input(GiB, GiB, 0);
    same_count.live_blocks = analysis::MetricChange{ByteRange::exact(1000), ByteRange::exact(0)};
    CHECK(judge(same_count).verdict == Verdict::shape_growth);
    CHECK(judge(same_count, false).verdict == Verdict::shape_growth);

    // Captures that are not comparable: the levels only, with the reason.
    const auto apart = judge(input(GiB, GiB, 0), false);
    CHECK(apart.verdict == Verdict::growth);
    CHECK(has_fact(apart.evidence, analysis::FactKind::growth_reason));
    CHECK(judge(input(0, GiB, 500 * MiB), false).verdict == Verdict::growth);  // no fragmentation
    CHECK(judge(input(0, GiB, 0), false).verdict == Verdict::cache_growth);    // a level
    CHECK(judge(input(-GiB, -GiB, 0), false).verdict == Verdict::shrink);

    auto with_ooms = input(0, 0, 0);
    with_ooms.ooms_delta = ByteRange::exact(2);
    with_ooms.retries_delta = ByteRange::exact(5);
    const auto oom = analysis::read_totals(with_ooms);
    CHECK(judge(with_ooms).verdict == Verdict::stable);
    CHECK(oom.new_ooms);
    CHECK(oom.new_retries);
    CHECK(has_fact(oom.evidence, analysis::FactKind::new_ooms));
    CHECK(has_fact(oom.evidence, analysis::FactKind::new_retries));
    CHECK(has_fact(oom.evidence, analysis::FactKind::metric_change, "allocated_bytes"));

    // Partial tables: allocated alone still gives leak, shrink or stable; reserved alone
    // cannot tell a leak from cache growth; neither is an input error.
    analysis::TotalsInput allocated_only;
    allocated_only.allocated = analysis::MetricChange{ByteRange::exact(5121 * MiB), ByteRange::exact(-5121 * MiB)};
    CHECK(judge(allocated_only).verdict == Verdict::shrink);
    analysis::TotalsInput reserved_only;
    reserved_only.reserved = analysis::MetricChange{ByteRange::exact(GiB), ByteRange::exact(GiB)};
    CHECK(judge(reserved_only).verdict == Verdict::growth);
    CHECK(has_fact(analysis::read_totals(reserved_only).evidence, analysis::FactKind::metric_missing));
    CHECK_THROWS_AS(analysis::read_totals(analysis::TotalsInput{}), Error);
}

TEST_CASE("advice: every verdict has its own / and retained-reference advice only for a leak" *
          doctest::test_suite("unit")) {
    using analysis::Advice;
    using analysis::Verdict;
    const auto has = [](const std::vector<Advice>& list, Advice a) {
        return std::find(list.begin(), list.end(), a) != list.end();
    };
    analysis::AdviceContext snapshots;
    snapshots.from_snapshots = true;
    CHECK(has(analysis::advice_for(Verdict::fragmentation, {}), Advice::fragmentation_fix));
    CHECK(has(analysis::advice_for(Verdict::cache_growth, {}), Advice::cache_fix));
    CHECK(has(analysis::advice_for(Verdict::leak, snapshots), Advice::leak_detach));
    CHECK(has(analysis::advice_for(Verdict::leak, {}), Advice::leak_take_snapshots));
    // Summaries name no sites: the snapshot wording ("the sites below") is not theirs.
    CHECK_FALSE(has(analysis::advice_for(Verdict::leak, {}), Advice::leak_kept));
    for (const auto v : {Verdict::one_time_growth, Verdict::shape_growth, Verdict::growth, Verdict::fragmentation,
                         Verdict::cache_growth, Verdict::stable, Verdict::shrink}) {
        CAPTURE(analysis::to_string(v));
        const auto list = analysis::advice_for(v, snapshots);
        CHECK(!list.empty());
        for (const auto leak : {Advice::leak_kept, Advice::leak_references, Advice::leak_detach})
            CHECK_FALSE(has(list, leak));
    }
    // The caveat comes first, and only on behaviour verdicts.
    analysis::AdviceContext caveat;
    caveat.caveat = true;
    CHECK(analysis::advice_for(Verdict::leak, caveat).front() == Advice::caveat_one_log);
    caveat.from_snapshots = true;
    CHECK(analysis::advice_for(Verdict::leak, caveat).front() == Advice::caveat_same_workload);
    CHECK_FALSE(has(analysis::advice_for(Verdict::shape_growth, caveat), Advice::caveat_same_workload));
    // Between processes, no allocator advice.
    analysis::AdviceContext apart;
    apart.one_process_ruled_out = true;
    CHECK_FALSE(has(analysis::advice_for(Verdict::cache_growth, apart), Advice::cache_fix));
    analysis::AdviceContext oom;
    oom.new_ooms = true;
    CHECK(has(analysis::advice_for(Verdict::stable, oom), Advice::ooms_without_growth));
    // Cache growth between levels says live memory is the same only when it is flat beyond
    // doubt; it also covers reserved growing while allocated falls.
    analysis::AdviceContext levels;
    levels.behaviour = false;
    CHECK(analysis::advice_for(Verdict::cache_growth, levels) == std::vector<Advice>{Advice::growth_cannot_tell});
    levels.live_flat = true;
    CHECK(analysis::advice_for(Verdict::cache_growth, levels) == std::vector<Advice>{Advice::cache_levels});
    levels.live_flat = false;
    levels.live_fell = true;
    CHECK(analysis::advice_for(Verdict::cache_growth, levels) == std::vector<Advice>{Advice::cache_levels_live_lower});
}

TEST_CASE("verdict: a range straddling the threshold counts as flat / with a note" * doctest::test_suite("unit")) {
    analysis::TotalsInput in;
    // threshold ≈ 20.5 MiB lies inside the allocated change
    in.allocated = analysis::MetricChange{{4 * GiB, 4 * GiB + MiB - 1}, {10 * MiB, 30 * MiB}};
    in.reserved = analysis::MetricChange{{5 * GiB, 5 * GiB + MiB - 1}, {0, 0}};
    const auto r = analysis::read_totals(in);
    CHECK(judge(in).verdict == analysis::Verdict::stable);
    REQUIRE_FALSE(r.evidence.empty());
    CHECK(r.evidence[0].kind == analysis::FactKind::metric_change);
    CHECK(r.evidence[0].is("uncertain"));
    const auto call = analysis::judge_change(in.allocated->before, in.allocated->delta);
    CHECK(call.change == analysis::Change::flat);
    CHECK(call.uncertain);
}

TEST_CASE("reader: nothing found is an input error" * doctest::test_suite("unit")) {
    try {
        stats::read_stats_text("hello\nworld {'a': 1}\n", "x.log");
        FAIL("expected an error");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::input);
        CHECK(e.file() == "x.log");
        CHECK(std::string(e.what()) == "no memory_summary table or memory_stats dict found");
    }
}

TEST_CASE("reader: abbreviated table / header fields / CRLF / stretched cells" * doctest::test_suite("unit")) {
    std::string text = kTable;
    std::string crlf;
    for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    for (const auto& input : {text, crlf}) {
        const auto c = stats::read_stats_text(input, "t.txt");
        REQUIRE(c.tables.size() == 1);
        const auto& t = c.tables[0];
        CHECK(t.device == 3);
        CHECK(t.num_ooms == ByteRange{1, 1});
        CHECK(t.num_alloc_retries == ByteRange{2, 2});
        CHECK(t.layout.text() == "torch1.10-1.13,abbreviated");
        CHECK(t.stats.at("allocated_bytes.all.allocated") == ByteRange{1149 * GiB, 1150 * GiB - 1});
        CHECK(t.stats.at("allocation.all.allocated") == ByteRange{98765000, 98765999});
        CHECK(t.stats.at("oversize_allocations.peak") == ByteRange{0, 0});
        // Allocated → Reserved skips Active/Non-releasable … rows: reported as missing.
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].find("rows missing") != std::string::npos);
    }
}

TEST_CASE("reader: headless rows and an unreadable cell" * doctest::test_suite("unit")) {
    const std::string text =
        "some log line\n"
        "| Allocated memory      |   5245 MiB |   oops     |   1149 GiB |   1144 GiB |\n"
        "| GPU reserved memory   |   8192 MiB |   9216 MiB |  12288 MiB |   4096 MiB |\n"
        "done\n";
    const auto c = stats::read_stats_text(text, "h.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& t = c.tables[0];
    CHECK_FALSE(t.device.has_value());
    CHECK(t.line == 2);
    CHECK(t.stats.size() == 7);
    CHECK_FALSE(t.stats.count("allocated_bytes.all.peak"));
    std::string all;
    for (const auto& w : t.warnings) all += w + "\n";
    CHECK(all.find("h.txt:2: table rows without the table header") != std::string::npos);
    CHECK(all.find("h.txt:2: row 'Allocated memory', Peak Usage: cannot read 'oops'") != std::string::npos);
    CHECK(all.find("h.txt:3: table starting at line 2 is cut short") != std::string::npos);
}

TEST_CASE("reader: memory_stats forms" * doctest::test_suite("unit")) {
    SUBCASE("Python 3.12 OrderedDict({...}) repr") {
        const auto c = stats::read_stats_text(
            "stats: OrderedDict({'allocated_bytes.all.current': 10, 'reserved_bytes.all.current': 20, "
            "'num_ooms': 1})\n",
            "s.txt");
        REQUIRE(c.kind == stats::CaptureKind::memory_stats);
        REQUIRE(c.tables.size() == 1);
        CHECK(c.tables[0].stats.at("allocated_bytes.all.current") == ByteRange{10, 10});
        CHECK(c.tables[0].num_ooms == ByteRange{1, 1});
        CHECK(c.tables[0].layout.text() == "memory_stats,python-repr");
    }
    SUBCASE("per-device wrapper keys give devices") {
        const auto c = stats::read_stats_text(
            R"({"cuda:0": {"allocated_bytes.all.current": 1}, "cuda:1": {"allocated_bytes.all.current": 2}})",
            "d.json");
        REQUIRE(c.tables.size() == 2);
        CHECK(c.tables[0].device == 0);
        CHECK(c.tables[1].device == 1);
        CHECK(c.tables[1].stats.at("allocated_bytes.all.current") == ByteRange{2, 2});
    }
    SUBCASE("a dict cut short keeps what was read, with the line") {
        const auto c = stats::read_stats_text(
            "x\n{'allocated_bytes.all.current': 5,\n 'reserved_bytes.all.current': 7,\n 'active_bytes.all.cu",
            "cut.log");
        REQUIRE(c.tables.size() == 1);
        CHECK(c.tables[0].stats.size() == 2);
        REQUIRE(c.tables[0].warnings.size() == 1);
        CHECK(c.tables[0].warnings[0].rfind("cut.log:4:", 0) == 0);
    }
    SUBCASE("several dumps in a log form a series") {
        const auto c = stats::read_stats_text(
            "step 1 {'allocated_bytes.all.current': 1}\nstep 2 {'allocated_bytes.all.current': 2}\n", "s.log");
        REQUIRE(c.tables.size() == 2);
        CHECK(c.tables[1].line == 2);
    }
}

TEST_CASE("reader: a hundred warnings per file / the rest counted" * doctest::test_suite("unit")) {
    std::string text = "| Allocated memory      |   5245 MiB |   5245 MiB |   1149 GiB |   1144 GiB |\n";
    for (int i = 0; i < 250; ++i) text += "...\n";
    const auto c = stats::read_stats_text(text, "w.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& w = c.tables[0].warnings;
    REQUIRE(w.size() == 101);
    // 252 in all: no header, 250 elisions, cut short.
    CHECK(w.back() == "152 more warning(s) in w.txt were not kept");
}
