// doctest's main, with the rules that keep a ctest run honest. ctest runs each test case in a
// process of its own (doctest_discover_tests, one entry a case), so:
// - a test case name may not hold ';' or ',' and every case sits in a suite (its ctest label).
//   CMake splits names on ';' and doctest's filters on ','; such an entry would run no case
//   and pass. A bad name fails every run, the listing too, so the build (whose test discovery
//   lists the cases) fails with the name;
// - a run in which no test case ran fails (doctest exits 0 when its filter matches nothing);
// - a run whose every case was skipped (MEMSNAP_SKIP, tests/support.hpp) exits
//   test::skip_exit_code, which ctest reports as Skipped. A run of several cases lists the
//   ones it skipped and exits as doctest does; a failure wins over a skip.
#define DOCTEST_CONFIG_IMPLEMENT
#include "support.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

namespace {

struct Tally {
    bool started = false;  // false for a query (--list-test-cases, --help, ...)
    unsigned ran = 0;
    std::string current;
};

Tally& tally() {
    static Tally t;
    return t;
}

// Counts the test cases that ran and which of them skipped.
struct SkipListener : doctest::IReporter {
    explicit SkipListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override { tally().started = true; }
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& test) override {
        ++tally().ran;
        tally().current = test.m_name;
        memsnap::test::skips().pending.clear();
    }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats&) override {
        auto& skips = memsnap::test::skips();
        if (!skips.pending.empty()) skips.done.push_back(tally().current + ": " + skips.pending);
        skips.pending.clear();
    }
    void test_case_exception(const doctest::TestCaseException&) override {}
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("memsnap-skips", 1, SkipListener);

// Names that ctest would split, and cases without a suite (no label). doctest keeps the
// registered cases in detail::getRegisteredTests(), defined in this file by
// DOCTEST_CONFIG_IMPLEMENT.
bool names_are_sound() {
    bool sound = true;
    for (const auto& test : doctest::detail::getRegisteredTests()) {
        const std::string_view name = test.m_name;
        const char* problem = name.find_first_of(";,") != std::string_view::npos ? "holds ';' or ','"
                              : *test.m_test_suite == '\0'                       ? "is in no test suite (ctest label)"
                                                                                 : nullptr;
        if (problem == nullptr) continue;
        std::fprintf(stderr,
                     "memsnap_tests: the test case \"%s\" (%s:%u) %s; ctest needs one entry a case and a label\n",
                     test.m_name, test.m_file.c_str(), test.m_line, problem);
        sound = false;
    }
    return sound;
}

}  // namespace

int main(int argc, char** argv) {
    if (!names_are_sound()) return 1;
    doctest::Context context(argc, argv);
    const int result = context.run();
    const auto& t = tally();
    if (!t.started) return result;
    const auto& skipped = memsnap::test::skips().done;
    if (t.ran == 0) {
        std::fprintf(stderr, "memsnap_tests: no test case ran: the filters match none\n");
        return 1;
    }
    if (result != 0) return result;
    if (!skipped.empty()) {
        std::cout << "memsnap_tests: " << skipped.size() << " of " << t.ran << " test case(s) skipped:\n";
        for (const auto& s : skipped) std::cout << "  " << s << "\n";
        std::cout.flush();
    }
    return skipped.size() == t.ran ? memsnap::test::skip_exit_code : 0;
}
