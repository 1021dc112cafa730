// The real memory_summary captures in ../shared/real/summaries, with cells checked by hand.
#include "analysis_support.hpp"
#include "stats_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <ostream>

using namespace memsnap;
using namespace memsnap::test;  // KiB, MiB, GiB, cell()

namespace {

stats::StatsCapture load(const std::string& name) {
    const auto path = test::real_dir() / "summaries" / name;
    return stats::read_stats_text(test::read_text(path), name);
}

const ByteRange& at(const stats::StatsTable& t, const std::string& key) {
    const auto it = t.stats.find(key);
    REQUIRE_MESSAGE(it != t.stats.end(), "missing " << key);
    return it->second;
}

}  // namespace

TEST_CASE("real summaries: gpt-neo before/after cells" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto before = load("gpt-neo-generation_pair_before.txt");
    REQUIRE(before.kind == stats::CaptureKind::memory_summary);
    REQUIRE(before.tables.size() == 1);
    const auto& b = before.tables[0];
    CHECK(b.device == 0);
    CHECK(b.line == 1);
    CHECK(b.layout.text() == "torch>=2.0");
    CHECK(b.warnings.empty());
    CHECK(b.num_ooms == ByteRange{0, 0});
    CHECK(b.num_alloc_retries == ByteRange{0, 0});
    CHECK(b.stats.size() == 116);  // 9 metrics × 3 pools × 4 columns + 2 oversize × 4
    CHECK(at(b, "allocated_bytes.all.current") == ByteRange{5114 * MiB, 5115 * MiB - 1});
    CHECK(at(b, "allocated_bytes.all.current") == ByteRange{5362417664, 5363466239});
    CHECK(at(b, "allocated_bytes.all.freed") == ByteRange{0, 0});
    CHECK(at(b, "allocated_bytes.small_pool.current") == cell(1, MiB));
    CHECK(at(b, "reserved_bytes.all.current") == cell(5132, MiB));
    CHECK(at(b, "inactive_split_bytes.all.current") == ByteRange{18313216, 18314239});  // 17884 KiB
    CHECK(at(b, "inactive_split_bytes.all.allocated") == cell(396656, KiB));
    CHECK(at(b, "allocation.all.current") == ByteRange{364, 364});
    CHECK(at(b, "segment.large_pool.current") == ByteRange{147, 147});
    CHECK(at(b, "inactive_split.all.allocated") == ByteRange{26, 26});
    CHECK(at(b, "oversize_segments.peak") == ByteRange{0, 0});

    const auto after = load("gpt-neo-generation_pair_after.txt");
    REQUIRE(after.tables.size() == 1);
    const auto& a = after.tables[0];
    CHECK(at(a, "allocated_bytes.all.current") == cell(5122, MiB));
    CHECK(at(a, "requested_bytes.all.peak") == cell(5203, MiB));
    CHECK(at(a, "reserved_bytes.all.current") == cell(5270, MiB));
    CHECK(at(a, "inactive_split_bytes.all.current") == cell(9564, KiB));
    CHECK(at(a, "inactive_split_bytes.small_pool.peak") == cell(20480, KiB));
    CHECK(at(a, "allocation.all.allocated") == ByteRange{77948, 77948});

    const auto diff = test::stats_diff(before, after);
    REQUIRE(diff.devices.size() == 1);
    const auto& d = diff.devices[0];
    // +8 MiB shown; the truncation allows anything strictly between +7 and +9 MiB.
    const auto& alloc = d.metrics.at("allocated_bytes.all.current").delta;
    CHECK(alloc == ByteRange{7 * MiB + 1, 9 * MiB - 1});
    CHECK(alloc.contains(8 * MiB));
    const auto& reserved = d.metrics.at("reserved_bytes.all.current").delta;
    CHECK(reserved == ByteRange{137 * MiB + 1, 139 * MiB - 1});
    CHECK(reserved.contains(138 * MiB));
    // +8 MiB on 5114 MiB is below the noise threshold (0.5% ≈ 25.6 MiB), reserved +138 MiB is
    // above it, non-releasable fell: the caching allocator grew, nothing leaked.
    CHECK(d.verdict == analysis::Verdict::cache_growth);
    // Within the noise floor is no growth, whatever rate it makes.
    CHECK_FALSE(test::gate(diff, 10 * MiB).has_value());
    CHECK_FALSE(test::gate(diff, 1 * MiB).has_value());

    test::check_golden("stats/real_gpt-neo_diff.txt", test::render(diff, report::Format::text));
    test::check_golden("stats/real_gpt-neo_diff.json", test::render(diff, report::Format::json));
    test::check_golden("stats/real_gpt-neo_diff.md", test::render(diff, report::Format::markdown));
    test::check_golden("stats/real_gpt-neo_diff.csv", test::render(diff, report::Format::csv));
    test::check_golden("stats/real_gpt-neo_before_info.txt", test::render(before));
}

TEST_CASE("real summaries: torch 1.9 notes with KB/MB/GB units" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto c = load("memory-notes_torch1.9_old-units.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& t = c.tables[0];
    CHECK(t.layout.text() == "torch<=1.9,old-units");
    CHECK(t.warnings.empty());
    CHECK(t.stats.size() == 96);  // no Requested, no Oversize rows
    CHECK_FALSE(t.stats.count("requested_bytes.all.current"));
    CHECK_FALSE(t.stats.count("oversize_allocations.current"));
    CHECK(at(t, "allocated_bytes.all.current") == cell(146836, KiB));
    CHECK(at(t, "allocated_bytes.all.peak") == cell(4261, MiB));
    CHECK(at(t, "allocated_bytes.all.allocated") == cell(847, GiB));
    CHECK(at(t, "allocated_bytes.small_pool.allocated") == cell(4, GiB));
    CHECK(at(t, "reserved_bytes.all.current") == cell(5176, MiB));
    CHECK(at(t, "inactive_split_bytes.all.allocated") == cell(351196, MiB));
    CHECK(at(t, "inactive_split_bytes.large_pool.current") == cell(617723, KiB));
    CHECK(at(t, "inactive_split.all.freed") == ByteRange{41883, 41883});
    test::check_golden("stats/real_torch1.9_info.json", test::render(c, report::Format::json));
}

TEST_CASE("real summaries: gravitorch 1.13 docstring / indented / byte-sized values" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto c = load("gravitorch-docstring_torch1.13_indented.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& t = c.tables[0];
    CHECK(t.layout.text() == "torch1.10-1.13,old-units");
    CHECK(t.warnings.empty());
    CHECK(t.stats.size() == 104);
    CHECK(at(t, "allocated_bytes.all.current") == ByteRange{512, 512});
    CHECK(at(t, "allocated_bytes.all.peak") == ByteRange{3584, 3584});
    CHECK(at(t, "allocated_bytes.all.allocated") == ByteRange{11776, 11776});
    CHECK(at(t, "reserved_bytes.all.current") == cell(2048, KiB));
    CHECK(at(t, "reserved_bytes.large_pool.current") == cell(0, KiB));
    CHECK(at(t, "inactive_split_bytes.all.allocated") == cell(2058, KiB));
    CHECK(at(t, "inactive_split_bytes.all.freed") == ByteRange{11264, 11264});
    CHECK(at(t, "oversize_allocations.current") == ByteRange{0, 0});
}

TEST_CASE("real summaries: sglang torch 2.x / KiB units" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto c = load("sglang-serving_torch2x_full.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& t = c.tables[0];
    CHECK(t.layout.text() == "torch>=2.0");
    CHECK(at(t, "allocated_bytes.all.current") == cell(184648, KiB));
    CHECK(at(t, "requested_bytes.all.peak") == cell(192832, KiB));
    CHECK(at(t, "reserved_bytes.all.freed") == ByteRange{0, 0});
    CHECK(at(t, "inactive_split_bytes.small_pool.current") == cell(1975, KiB));
    CHECK(at(t, "segment.all.current") == ByteRange{10, 10});
}

TEST_CASE("real summaries: comfyui docker log / cudaMallocAsync zeros" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto c = load("comfyui-docker-log_torch2.8_cudaMallocAsync.txt");
    REQUIRE(c.tables.size() == 1);
    const auto& t = c.tables[0];
    CHECK(t.device == 0);
    CHECK(t.layout.text() == "torch>=2.0,cudaMallocAsync");
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find("cudaMallocAsync") != std::string::npos);
    CHECK(at(t, "allocated_bytes.all.current") == cell(3116, MiB));
    CHECK(at(t, "allocated_bytes.all.peak") == cell(21865, MiB));
    CHECK(at(t, "allocated_bytes.large_pool.current") == cell(0, MiB));  // "0 MiB": below 1 MiB
    CHECK(at(t, "allocated_bytes.all.allocated") == ByteRange{0, 0});
    CHECK(at(t, "reserved_bytes.all.current") == cell(3424, MiB));
    CHECK(at(t, "allocation.all.current") == ByteRange{0, 0});
    test::check_golden("stats/real_comfyui_info.txt", test::render(c));
}
