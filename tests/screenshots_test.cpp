// One screenshot per output format, each in the program it is for (Chromium, Graphviz,
// speedscope, go tool pprof), drawn by tests/consumers/screenshots.sh into the build folder:
// docs/screens holds the same set (MEMSNAP_UPDATE_GOLDEN=1 redraws it) and README.md shows
// each. Pixels differ with fonts and versions, so the pictures are checked for what they are
// (PNGs of a sane size, small enough to commit), not byte for byte.

#include "support.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace memsnap;

namespace {

// A PNG's width and height from its header; {0, 0} when it is not a PNG.
std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& png) {
    if (png.size() < 24 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || png.compare(12, 4, "IHDR") != 0)
        return {0, 0};
    const auto be32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
        return v;
    };
    return {be32(16), be32(20)};
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("screenshots: one per format in its viewer / docs/screens holds the same") {
        const auto built = std::filesystem::path(MEMSNAP_BUILD_DIR) / "screens";
        std::filesystem::remove_all(built);
        const auto out = test::shell_output(
            fmt::format("{} {} {} {} 2>&1; echo \"exit $?\"",
                        test::quote(test::source_dir() / "tests" / "consumers" / "screenshots.sh"),
                        test::quote(MEMSNAP_BINARY), test::quote(built), test::quote(MEMSNAP_NODE_MODULES)));
        if (out.find("exit 77") != std::string::npos) MEMSNAP_SKIP(out.substr(0, out.find("exit 77")));
        REQUIRE_MESSAGE(out.ends_with("exit 0\n"), out);
        const auto docs = test::source_dir() / "docs" / "screens";
        const char* update = std::getenv("MEMSNAP_UPDATE_GOLDEN");
        if (update && *update == '1') {
            std::filesystem::remove_all(docs);
            std::filesystem::create_directories(docs);
            for (const auto& png : test::files_in(built, ".png"))
                std::filesystem::copy_file(png, docs / png.filename());
        }
        const auto readme = test::read_text(test::source_dir() / "README.md");
        std::vector<std::string> made, kept;
        for (const auto& png : test::files_in(built, ".png")) {
            CAPTURE(png.filename().string());
            made.push_back(png.filename().string());
            const auto data = test::read_text(png);
            const auto [width, height] = png_size(data);
            CHECK(width >= 400);
            CHECK(height >= 200);
            CHECK(data.size() <= 400 * 1024);  // small enough to commit and to load
            CHECK(readme.find("docs/screens/" + png.filename().string()) != std::string::npos);
        }
        for (const auto& png : test::files_in(docs, ".png")) {
            kept.push_back(png.filename().string());
            CHECK(png_size(test::read_text(png)).first >= 400);
        }
        // Pixels differ with fonts and versions; the set of pictures may not.
        CHECK_MESSAGE(made == kept, "docs/screens is not what the test draws: MEMSNAP_UPDATE_GOLDEN=1 redraws it");
        CHECK(made.size() >= 11);
    }
}
