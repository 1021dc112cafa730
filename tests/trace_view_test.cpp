// The interactive view's data (trace_view): at every moment the rows sum to the replayed
// allocated bytes and the peak is a moment of its own; bands are capped, and merged bands
// hold the rest; the page's script hash (SHA-256, base64) against the standard's vectors.

#include "support.hpp"

#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/analysis/trace/view.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/util/sha256.hpp>

#include <filesystem>
#include <numeric>

using namespace memsnap;

namespace {

std::string sha256_base64(std::string_view text) {
    const auto digest = util::sha256(text);
    return util::base64(digest.data(), digest.size());
}

std::int64_t row_sum(const analysis::ViewMoment& m) {
    std::int64_t sum = m.other_site_bytes + m.unattributed;
    for (const auto& r : m.sites) sum += r.bytes;
    return sum;
}

// What every view holds, whatever the capture.
void check_view(const snapshot::Snapshot& snap) {
    const analysis::AnalysisOptions options;
    const auto v = analysis::trace_view(snap, options);
    REQUIRE_FALSE(v.moments.empty());
    CHECK(v.moments.back().at == v.events);
    CHECK(v.bands.size() <= limits::view_bands);
    CHECK(v.merged.size() <= limits::view_merged_sites + 1);
    CHECK(v.moments.size() <= limits::view_samples + limits::view_marked_moments + 2);
    // Every band and every merged band names a site and a stack the view holds.
    for (const auto& b : v.bands) {
        CHECK(b.from <= b.to);
        CHECK(b.to <= v.events);
        CHECK(b.site < v.sites.size());
        CHECK(b.stack < v.stacks.size());
    }
    for (const auto& stack : v.stacks) CHECK(stack.size() <= limits::view_stack_frames + 1);
    bool peak = false;
    for (const auto& m : v.moments) {
        CAPTURE(m.at);
        CHECK(row_sum(m) == m.allocated);
        CHECK(m.sites.size() <= limits::view_moment_sites);
        std::size_t blocks = 0;
        for (const auto& s : m.segments) blocks += s.blocks.size();
        CHECK(blocks <= limits::view_moment_blocks);
        peak = peak || (m.at == v.peak && m.kind == "peak");
    }
    CHECK(peak);
    // Without merged bands, the bands at the peak add up to what is allocated there.
    if (v.merged.empty() && v.events > 0) {
        std::int64_t banded = 0;
        for (const auto& b : v.bands)
            if (b.from <= v.peak && v.peak <= b.to) banded += b.bytes;
        const auto at_peak =
            std::find_if(v.moments.begin(), v.moments.end(), [&](const auto& m) { return m.at == v.peak; });
        CHECK(banded == at_peak->allocated - at_peak->unattributed);
    }
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("sha256 and base64: the standard's test vectors") {
        CHECK(sha256_base64("") == "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
        CHECK(sha256_base64("abc") == "ungWv48Bz+pBQUDeXa4iI7ADYaOWF3qctBD/YfIAFa0=");
        CHECK(sha256_base64("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
              "JI1qYdIGOLjlwCaTDD5gOaM85Flk/yFn9uzt1BnbBsE=");
        CHECK(sha256_base64(std::string(1000000, 'a')) == "zcduXJkU+5KBocfihNc+Z/GAmkiklyAOBG05zMcRLNA=");
        const std::uint8_t two[] = {'a', 'b'};
        CHECK(util::base64(two, 2) == "YWI=");
    }

    TEST_CASE("trace_view on the bundled fixtures: rows sum to the replay at every moment") {
        for (const char* name : {"oom_loop.pickle", "gen_torch2.9_newest.pickle", "gen_torch2.5_settings.pickle",
                                 "gen_torch1.13_history.pickle"}) {
            CAPTURE(name);
            check_view(snapshot::load_snapshot((test::source_dir() / "fixtures" / "snapshots" / name).string()));
        }
    }
}

TEST_SUITE("real") {
    TEST_CASE("trace_view on every real capture: rows sum to the replay / the peak is a moment / caps hold") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t views = 0;
        for (const auto& entry : std::filesystem::directory_iterator(test::real_dir() / "snapshots")) {
            const auto name = entry.path().filename().string();
            if (name == "expected.json") continue;
            CAPTURE(name);
            const auto snap = snapshot::load_snapshot(entry.path().string());
            if (snap.segments.empty() && snap.events.empty()) continue;  // nothing to view: no page has one
            check_view(snap);
            ++views;
        }
        CHECK(views > 10);
    }
}
