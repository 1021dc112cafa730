// Every generated summary/stats fixture parses, and each parsed range equals the range the
// rendering allows (computed by fixtures/gen_summaries.py) and contains the true value.
#include "support.hpp"

#include <memsnap/stats/text_reader.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <ostream>

namespace memsnap {
// Readable ranges in doctest failure messages.
inline std::ostream& operator<<(std::ostream& os, const ByteRange& r) {
    return os << "[" << r.low << ", " << r.high << "]";
}
}  // namespace memsnap

using namespace memsnap;
namespace fs = std::filesystem;

namespace {

fs::path summaries_dir() { return test::fixtures_dir() / "summaries"; }

std::vector<fs::path> fixture_files() {
    std::vector<fs::path> out;
    for (const auto& p : test::files_in(summaries_dir()))
        if (p.string().find(".truth.json") == std::string::npos) out.push_back(p);
    return out;
}

}  // namespace

TEST_CASE("stats fixtures: every file parses and contains its truth" * doctest::test_suite("unit")) {
    const auto files = fixture_files();
    REQUIRE(files.size() >= 25);
    for (const auto& path : files) {
        const auto name = path.filename().string();
        CAPTURE(name);
        const auto truth = nlohmann::json::parse(test::read_text(path.string() + ".truth.json"));
        const auto capture = stats::read_stats_text(test::read_text(path), name);
        const auto& tables = truth.at("tables");
        REQUIRE(capture.tables.size() == tables.size());
        for (std::size_t i = 0; i < tables.size(); ++i) {
            CAPTURE(i);
            const auto& expected = tables[i];
            const auto& table = capture.tables[i];
            if (expected.at("device").is_null())
                CHECK_FALSE(table.device.has_value());
            else
                CHECK(table.device == expected.at("device").get<int>());
            CHECK(table.layout.text() == expected.at("layout").get<std::string>());

            std::size_t stat_keys = 0;
            for (const auto& item : expected.at("ranges").items()) {
                const std::string key = item.key();  // not a binding: clang 14 cannot capture one
                const auto& range = item.value();
                CAPTURE(key);
                const ByteRange want{range[0].get<std::int64_t>(), range[1].get<std::int64_t>()};
                if (key == "num_ooms") {
                    CHECK(table.num_ooms == want);
                } else if (key == "num_alloc_retries") {
                    CHECK(table.num_alloc_retries == want);
                } else {
                    ++stat_keys;
                    const auto it = table.stats.find(key);
                    REQUIRE(it != table.stats.end());
                    CHECK(it->second == want);
                }
            }
            // Nothing invented: exactly the visible cells, each containing the true value.
            CHECK(table.stats.size() == stat_keys);
            const auto& real = expected.at("stats");
            for (const auto& entry : table.stats) {
                const auto& key = entry.first;
                const auto& range = entry.second;
                CAPTURE(key);
                REQUIRE(real.contains(key));
                CHECK(range.contains(real.at(key).get<std::int64_t>()));
            }
            const auto& lines = expected.at("warning_lines");
            for (const auto& line : lines) {
                const auto marker = fmt::format("{}:{}:", name, line.get<int>());
                const bool named = std::any_of(table.warnings.begin(), table.warnings.end(), [&](const std::string& w) {
                    return w.find(marker) != std::string::npos;
                });
                CHECK_MESSAGE(named, "no warning names " << marker);
            }
            if (lines.empty() && !table.layout.cuda_malloc_async) CHECK(table.warnings.empty());
        }
    }
}
