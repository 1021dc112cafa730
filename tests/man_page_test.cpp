// Every option the CLI accepts is documented in the man page and the README.

#include "support.hpp"

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/limits.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>

using namespace memsnap;

TEST_CASE("every CLI option appears in man/memsnap.1 and README.md" * doctest::test_suite("cli")) {
    const std::string man = test::read_text(test::source_dir() / "man" / "memsnap.1");
    const std::string readme = test::read_text(test::source_dir() / "README.md");
    REQUIRE(!man.empty());
    std::set<std::string> options;
    for (const char* command :
         {"--help", "info --help", "diff --help", "trace --help", "trend --help", "ranks --help"}) {
        // (the options of every command)
        const auto help = test::run_memsnap(command);
        REQUIRE(help.exit_code == 0);
        const std::regex option("(^|[ ,])(--[a-z][a-z-]+)");
        for (auto it = std::sregex_iterator(help.out.begin(), help.out.end(), option); it != std::sregex_iterator();
             ++it)
            options.insert((*it)[2].str());
    }
    REQUIRE(options.size() >= 15);
    // roff escapes '-' as '\-' in option names.
    std::string man_plain = std::regex_replace(man, std::regex(R"(\\-)"), "-");
    for (const auto& o : options) {
        CAPTURE(o);
        CHECK(man_plain.find(o) != std::string::npos);
        if (o != "--help") CHECK(readme.find(o) != std::string::npos);
    }
    for (const char* word : {"info", "diff", "trace", "trend", "ranks", "jsonl", "PICTURES", "TRACE OPTIONS",
                             "TREND OPTIONS", "EXIT STATUS", "schema_version"})
        CHECK(man_plain.find(word) != std::string::npos);
}

TEST_CASE("the man page prints the user-code and category rule tables as the code has them" *
          doctest::test_suite("unit")) {
    std::string man = test::read_text(test::source_dir() / "man" / "memsnap.1");
    man = std::regex_replace(man, std::regex(R"(\\-)"), "-");
    man = std::regex_replace(man, std::regex(R"(\\\(aq)"), "'");
    man = std::regex_replace(man, std::regex(R"(\\e)"), "\\");
    for (const auto& rule : analysis::default_not_user_code()) {
        CAPTURE(rule.pattern);
        CHECK(man.find(rule.pattern) != std::string::npos);
    }
    for (const auto& rule : analysis::generated_code()) {
        CAPTURE(rule.pattern);
        CHECK(man.find(rule.pattern) != std::string::npos);
    }
    std::size_t at = man.find(".SH MEMORY CATEGORIES");
    REQUIRE(at != std::string::npos);
    for (const auto& rule : analysis::category_rules()) {
        // In table order: each rule's patterns after those of the rule before it.
        for (const char* pattern : {rule.path, rule.function, rule.unless_path}) {
            if (!pattern) continue;
            CAPTURE(pattern);
            const auto found = man.find(pattern, at);
            CHECK(found != std::string::npos);
            if (found != std::string::npos) at = found;
        }
        CHECK(man.find(std::string(analysis::to_string(rule.category)), at - 300) != std::string::npos);
    }
}

// The man page's LIMITS section is limits::caps as roff; MEMSNAP_UPDATE_GOLDEN=1 rewrites it.
TEST_CASE("the man page lists every cap of limits::caps" * doctest::test_suite("cli")) {
    const auto path = test::source_dir() / "man" / "memsnap.1";
    const std::string man = test::read_text(path);
    std::string section =
        ".SH LIMITS\nCaps on what memsnap keeps and writes, none reached by a real capture but the view_ caps (the\n"
        "HTML view aggregates on purpose, to stay small): each bounds what a small crafted file could make\n"
        "it hold or write. The reader's own limits are GLOBAL OPTIONS.\n";
    for (const auto& cap : limits::caps) {
        const auto value = cap.unit == "bytes" && cap.value % (1 << 20) == 0 ? fmt::format("{} MiB", cap.value >> 20)
                           : cap.unit.empty()                                ? fmt::format("{}", cap.value)
                                              : fmt::format("{} {}", cap.value, cap.unit);
        section += fmt::format(".TP\n.B {}\n{}: {}.\n", cap.name, value, cap.why);
    }
    const auto start = man.find(".SH LIMITS\n"), end = man.find(".SH SECURITY\n");
    REQUIRE(end != std::string::npos);
    if (std::getenv("MEMSNAP_UPDATE_GOLDEN")) {
        const auto from = start == std::string::npos ? end : start;
        std::ofstream(path, std::ios::binary) << man.substr(0, from) + section + man.substr(end);
        return;
    }
    REQUIRE(start != std::string::npos);
    CHECK(man.substr(start, end - start) == section);
}

// The VERDICTS section prints analysis::verdicts(): each verdict, its kind, meaning and
// preconditions, as verdict.cpp's table says.
TEST_CASE("the man page's VERDICTS section is the verdict table" * doctest::test_suite("cli")) {
    // Compared as running text: roff's line breaks and inline bold words are layout.
    const auto running = [](std::string text) {
        text = std::regex_replace(text, std::regex(R"(\n\.BR? (\S+) ?)"), " $1");
        return std::regex_replace(text, std::regex("\n"), " ");
    };
    const std::string man = running(test::read_text(test::source_dir() / "man" / "memsnap.1"));
    for (const auto& v : analysis::verdicts()) {
        CAPTURE(v.spelling);
        // The meaning as a sentence: capitalised, with a full stop.
        std::string meaning(v.meaning);
        meaning[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(meaning[0])));
        const auto entry = fmt::format("\n.BR {} \" ({})\"\n{}.\n.br\n{}\n", v.spelling,
                                       v.behaviour ? "behaviour" : "level", meaning, v.preconditions);
        CHECK(man.find(running(entry)) != std::string::npos);
    }
}
