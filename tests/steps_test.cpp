// Steps from --steps and from file names.

#include "support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/steps.hpp>
#include <memsnap/util/units.hpp>

using namespace memsnap;

TEST_CASE("steps from file names: a step word only" * doctest::test_suite("unit")) {
    using util::resolve_steps;
    using Span = std::optional<std::pair<std::int64_t, std::int64_t>>;
    CHECK(resolve_steps("", "run_step100.pickle", "run_step500.pickle").span == Span({100, 500}));
    CHECK(resolve_steps("", "a/step_100.pickle", "b/step_500.pickle").span == Span({100, 500}));
    CHECK(resolve_steps("", "iter100.pkl", "iter500.pkl").span == Span({100, 500}));
    CHECK(resolve_steps("", "before_step100.pickle", "after_step500.pickle").span == Span({100, 500}));
    CHECK(resolve_steps("", "gpu0_epoch3.pickle", "gpu0_epoch7.pickle").span == Span({3, 7}));
    CHECK(resolve_steps("", "snap_it-10.pickle", "snap_it-20.pickle").span == Span({10, 20}));
    CHECK(resolve_steps("", "global_step10.pickle", "global_step20.pickle").span == Span({10, 20}));
    CHECK(resolve_steps("", "batch_10.pickle", "batch_20.pickle").span == Span({10, 20}));
    CHECK(resolve_steps("", "run_step100.pickle", "run_step500.pickle").source == "file names");
    // Numbers that are not steps: context lengths, precisions, plain numbers, words that end
    // in a step word.
    CHECK_FALSE(resolve_steps("", "memory_ctx128_forward.pickle", "memory_ctx512_forward.pickle").span);
    CHECK_FALSE(resolve_steps("", "forward_fp32.pickle", "forward_bf16.pickle").span);
    CHECK_FALSE(resolve_steps("", "018.txt", "019.txt").span);
    CHECK_FALSE(resolve_steps("", "snap_100.pickle", "snap_500.pickle").span);
    CHECK_FALSE(resolve_steps("", "commit100.pickle", "commit500.pickle").span);
    CHECK_FALSE(resolve_steps("", "before.pickle", "after.pickle").span);
    CHECK_FALSE(resolve_steps("", "step100.pickle", "step100.pickle").span);
    CHECK(resolve_steps("", "forward_fp32.pickle", "forward_bf16.pickle").source == "unknown");
    // File names in decreasing order give no steps, and say why.
    const auto reversed = resolve_steps("", "step500.pickle", "step100.pickle");
    CHECK_FALSE(reversed.span);
    CHECK(reversed.note.find("500 and 100") != std::string::npos);
    // --steps wins and is validated: two whole numbers, increasing.
    CHECK(resolve_steps("10,20", "step100.pickle", "step500.pickle").span == Span({10, 20}));
    CHECK(resolve_steps(" 10 , 20 ", "x", "y").source == "--steps");
    CHECK_THROWS_AS(resolve_steps("10", "x", "y"), Error);
    CHECK_THROWS_AS(resolve_steps("10,10", "x", "y"), Error);
    CHECK_THROWS_AS(resolve_steps("500,100", "x", "y"), Error);
    CHECK_THROWS_AS(resolve_steps("a,b", "x", "y"), Error);
    CHECK_THROWS_AS(resolve_steps("0,99999999999999999999", "x", "y"), Error);
    try {
        resolve_steps("0,99999999999999999999", "x", "y");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("stoll") == std::string::npos);
        CHECK(std::string(e.what()).find("--steps") != std::string::npos);
    }
}

TEST_CASE("sizes with units" * doctest::test_suite("unit")) {
    CHECK(util::parse_size("4096") == 4096);
    CHECK(util::parse_size("10MiB") == 10 * 1024 * 1024);
    CHECK(util::parse_size("10 MB") == 10 * 1024 * 1024);
    CHECK(util::parse_size("1.5GiB") == 1536ll * 1024 * 1024);
    CHECK(util::parse_size("512k") == 512 * 1024);
    CHECK(util::parse_size("2MiB/step") == 2 * 1024 * 1024);
    CHECK_THROWS_AS(util::parse_size("ten"), Error);
    CHECK_THROWS_AS(util::parse_size("-5MiB"), Error);
    CHECK_THROWS_AS(util::parse_size("5 parsecs"), Error);
    CHECK(util::human_bytes(512) == "512 B");
    CHECK(util::human_bytes(1536) == "1.50 KiB");
    CHECK(util::signed_bytes(2 * 1024 * 1024) == "+2.00 MiB");
    CHECK(util::signed_bytes(-1024) == "-1.00 KiB");
}
