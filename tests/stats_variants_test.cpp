// The same table wrapped the ways it reaches users must give the same values as the plain
// table: notebook JSON, log prefixes that contain '|', tabs and CRLF, a repr after a prompt.

#include "support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <nlohmann/json.hpp>

#include <sstream>

using namespace memsnap;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

void check_same_values(const std::string& plain, const std::string& wrapped, const char* what) {
    CAPTURE(what);
    const auto expected = stats::read_stats_text(plain, "plain.txt");
    const auto actual = stats::read_stats_text(wrapped, "wrapped.txt");
    REQUIRE(actual.tables.size() == expected.tables.size());
    for (std::size_t i = 0; i < expected.tables.size(); ++i) {
        CHECK(actual.tables[i].device == expected.tables[i].device);
        CHECK(actual.tables[i].stats == expected.tables[i].stats);
        CHECK(actual.tables[i].warnings.empty());
    }
}

}  // namespace

TEST_CASE("a summary wrapped as users paste it parses to the same values" * doctest::test_suite("unit")) {
    for (const char* name : {"layout_torch2.0.txt", "layout_torch1.9.txt", "two_devices.txt"}) {
        CAPTURE(name);
        const std::string plain = test::read_text(test::fixtures_dir() / "summaries" / name);
        const auto lines = lines_of(plain);

        nlohmann::json text = nlohmann::json::array();  // a Jupyter notebook's stream output
        for (const auto& l : lines) text.push_back(l + "\n");
        const nlohmann::json notebook = {
            {"cells", {{{"cell_type", "code"}, {"outputs", {{{"name", "stdout"}, {"text", text}}}}}}}};
        check_same_values(plain, notebook.dump(1), "notebook JSON");

        std::string logged, tabbed;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            logged += "2024-01-01 12:00:0" + std::to_string(i % 10) + " | INFO | train | " + lines[i] + "\n";
            tabbed += "\t" + lines[i] + "\r\n";
        }
        check_same_values(plain, logged, "log prefix with pipes");
        check_same_values(plain, tabbed, "tabs and CRLF");

        std::string repr = "Out[7]: '";
        for (const auto& l : lines) repr += l + "\\n";
        repr += "'\n";
        check_same_values(plain, repr, "one-line repr after a prompt");
    }
}

TEST_CASE("memory_stats pretty-printed in a notebook parse to the same values" * doctest::test_suite("unit")) {
    const std::string flat = test::read_text(test::fixtures_dir() / "summaries" / "stats_flat.json");
    const auto expected = stats::read_stats_text(flat, "stats_flat.json");
    REQUIRE(expected.tables.size() == 1);
    // pprint.pformat of the dict, one "key: value," per line, as notebook stream output.
    const auto parsed = nlohmann::json::parse(flat);
    nlohmann::json text = nlohmann::json::array();
    std::size_t i = 0;
    for (const auto& [key, value] : parsed.items()) {
        const std::string open = i == 0 ? "{" : " ";
        const std::string close = ++i == parsed.size() ? "}" : ",";
        text.push_back(open + "'" + key + "': " + value.dump() + close + "\n");
    }
    const nlohmann::json notebook = {{"cells", {{{"outputs", {{{"text", text}}}}}}}};
    const auto actual = stats::read_stats_text(notebook.dump(1), "stats.ipynb");
    CHECK(actual.kind == stats::CaptureKind::memory_stats);
    REQUIRE(actual.tables.size() == 1);
    CHECK(actual.tables[0].stats == expected.tables[0].stats);
    CHECK_THROWS_AS(stats::read_stats_text(R"({"cells": [{"outputs": [{"text": ["hello\n"]}]}]})", "empty.ipynb"),
                    Error);
}
