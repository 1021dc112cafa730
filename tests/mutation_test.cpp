// A deterministic fuzz pass: every snapshot fixture, truncated and with bytes flipped, must
// either load or be refused with memsnap::Error; never crash, hang or throw anything else.

#include "analysis_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <random>

using namespace memsnap;

namespace {

// Loads `bytes` and, when that works, runs the summary: both must only ever throw Error.
void must_not_crash(const std::string& bytes, const std::string& name) {
    try {
        snapshot::LoadOptions options;
        options.limits.max_string_length = 1 << 20;
        const auto snap = snapshot::load_snapshot_bytes(bytes, name, options);
        (void)test::describe(snap);
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::input);
    }
}

}  // namespace

TEST_CASE("mutated snapshots load or fail cleanly" * doctest::test_suite("slow")) {
    std::mt19937_64 rng(20261129);
    std::vector<std::filesystem::path> files = test::files_in(test::fixtures_dir() / "snapshots", ".pickle");
    for (const auto& f : test::files_in(test::fixtures_dir() / "malformed", ".pickle")) files.push_back(f);
    for (const auto& f : test::files_in(test::fixtures_dir() / "snapshots", ".json"))
        if (f.filename() != "expected.json") files.push_back(f);
    REQUIRE(files.size() > 20);
    std::size_t cases = 0;
    for (const auto& path : files) {
        const std::string original = test::read_text(path);
        if (original.empty()) continue;
        for (int round = 0; round < 60; ++round) {
            std::string bytes = original;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < flips; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng() & 0xff);
            if (round % 5 == 0) bytes.resize(rng() % bytes.size());
            must_not_crash(bytes, path.filename().string());
            ++cases;
        }
    }
    CHECK(cases > 1000);
}

TEST_CASE("mutated summaries parse or fail cleanly" * doctest::test_suite("slow")) {
    std::mt19937_64 rng(7);
    for (const auto& path : test::files_in(test::fixtures_dir() / "summaries", ".txt")) {
        const std::string original = test::read_text(path);
        for (int round = 0; round < 20; ++round) {
            std::string text = original;
            for (int k = 0; k < 8; ++k) {
                const auto at = rng() % text.size();
                switch (rng() % 3) {
                    case 0:
                        text[at] = "|0123456789 KMGiB.\n"[rng() % 19];
                        break;
                    case 1:
                        text.erase(at, rng() % 40);
                        break;
                    default:
                        text.insert(at, "| 99999999999999999999 GiB |");
                        break;
                }
                if (text.empty()) text = "x";
            }
            try {
                (void)stats::read_stats_text(text, path.filename().string());
            } catch (const Error& e) {
                CHECK(e.kind() == ErrorKind::input);
            }
        }
    }
}
