// Pictures opened in their real consumers, over the fixtures and every real capture:
// `go tool pprof` (Debian golang-go) reads `--format pprof`, and speedscope (npm, its own
// importer run in headless Chromium by tests/consumers/speedscope_import.mjs) reads
// `--format folded` and `--format pprof`; each must find memsnap's live bytes (a diff's sides
// and its change), frame for frame names as memsnap wrote them. Each skips without its tool.

#include "support.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

using namespace memsnap;
using nlohmann::json;

namespace {

std::filesystem::path work_dir(const std::string& name) {
    const auto dir = std::filesystem::temp_directory_path() / fmt::format("memsnap_{}_{}", name, ::getpid());
    std::filesystem::create_directories(dir);
    return dir;
}

// What one memsnap command draws and what its bytes must add up to.
struct Picture {
    std::string name;     // of the files written
    std::string command;  // memsnap's arguments but --format
    std::int64_t bytes = 0;
    bool change = false;  // a diff's change: pprof holds growth and shrinkage
};

std::vector<std::filesystem::path> fixture_captures() {
    std::vector<std::filesystem::path> out;
    for (const auto& pair : std::filesystem::directory_iterator(test::fixtures_dir() / "pairs"))
        for (const auto& ext : {".pickle", ".pkl"})
            for (const auto& f : test::files_in(pair.path(), ext)) out.push_back(f);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::filesystem::path> real_captures() {
    std::vector<std::filesystem::path> out;
    for (const auto& ext : {".pickle", ".pkl"})
        for (const auto& f : test::files_in(test::real_dir() / "snapshots", ext)) out.push_back(f);
    return out;
}

// `info` of each capture (live bytes: allocated on every device; also with --cpp-frames, the
// C++ names), and `diff` of each pair as its change and either side.
std::vector<Picture> pictures_of(const std::vector<std::filesystem::path>& captures,
                                 const std::vector<std::pair<std::filesystem::path, std::filesystem::path>>& pairs,
                                 bool cpp_frames_too) {
    std::vector<Picture> out;
    for (const auto& c : captures) {
        const auto r = test::run_memsnap(fmt::format("info {} --format json", test::quote(c)));
        REQUIRE(r.exit_code == 0);
        const auto bytes = json::parse(r.out).at("allocated_bytes").get<std::int64_t>();
        out.push_back({c.filename().string(), fmt::format("info {}", test::quote(c)), bytes});
        if (cpp_frames_too)
            out.push_back({c.filename().string() + "_cpp", fmt::format("info {} --cpp-frames", test::quote(c)), bytes});
    }
    for (const auto& [before, after] : pairs) {
        const auto args = fmt::format("diff {} {}", test::quote(before), test::quote(after));
        const auto r = test::run_memsnap(args + " --format json");
        REQUIRE((r.exit_code == 0 || r.exit_code == 3));
        const auto diff = json::parse(r.out);
        const auto totals = diff.at("totals").at("allocated_bytes");
        // A pair without a single stack draws nothing (and says so): no stack to draw.
        const bool drawn = diff.at("stacks_recorded").get<bool>();
        const auto bytes = [&](const char* side) { return drawn ? totals.at(side).get<std::int64_t>() : 0; };
        const auto name = after.parent_path().filename().string() + "_" + after.stem().string();
        out.push_back({name + "_delta", args + " --side delta", bytes("delta"), true});
        out.push_back({name + "_before", args + " --side before", bytes("before")});
        out.push_back({name + "_after", args + " --side after", bytes("after")});
    }
    return out;
}

std::vector<std::pair<std::filesystem::path, std::filesystem::path>> fixture_pairs() {
    std::vector<std::pair<std::filesystem::path, std::filesystem::path>> out;
    for (const auto& pair : std::filesystem::directory_iterator(test::fixtures_dir() / "pairs")) {
        std::vector<std::filesystem::path> files;
        for (const auto& ext : {".pickle", ".pkl"})
            for (const auto& f : test::files_in(pair.path(), ext)) files.push_back(f);
        if (files.size() == 2) out.emplace_back(files[0], files[1]);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::pair<std::filesystem::path, std::filesystem::path>> real_pairs() {
    const auto dir = test::real_dir() / "snapshots";
    return {{dir / "silmont2000-a2_forward_fp32.pickle", dir / "silmont2000-a2_forward_bf16.pickle"},
            {dir / "wedsonlin-a2_medium128_inference.pickle", dir / "wedsonlin-a2_medium128_training.pickle"},
            {dir / "a0kuma-ckpt_plain.pickle", dir / "a0kuma-ckpt_checkpointed.pickle"}};
}

// The frames of folded output, as written ("name (file:line)").
std::set<std::string> folded_frames(const std::string& folded) {
    std::set<std::string> out;
    std::istringstream in(folded);
    for (std::string line; std::getline(in, line);) {
        const std::string stack = line.substr(0, line.rfind(' '));
        for (std::size_t start = 0; start <= stack.size();) {
            const auto end = std::min(stack.find(';', start), stack.size());
            out.insert(stack.substr(start, end - start));
            start = end + 1;
        }
    }
    return out;
}

// The names a pprof of the same stacks gives its Python frames and "<no stack>": the function
// alone, '<' and '>' as '[' and ']' ([module], [no stack]). C++ names are left out: pprof
// itself shortens them (template and argument lists) when it lists them.
std::set<std::string> pprof_python_names(const std::string& folded) {
    static const std::regex python(R"(^(.*) \((.*\.py|<ipython-input-.*|<eval_with_key>.*):[0-9]+\)$)");
    std::set<std::string> out;
    for (const auto& frame : folded_frames(folded)) {
        std::smatch m;
        std::string name;
        if (std::regex_match(frame, m, python))
            name = m[1];
        else if (frame == "<no stack>")
            name = frame;
        else
            continue;
        std::replace(name.begin(), name.end(), '<', '[');
        std::replace(name.begin(), name.end(), '>', ']');
        out.insert(name);
    }
    return out;
}

bool includes(const std::set<std::string>& all, const std::set<std::string>& some) {
    return std::includes(all.begin(), all.end(), some.begin(), some.end());
}

// go tool pprof -top over every node: the bytes it accounts for and the names it lists.
struct PprofTop {
    std::int64_t accounted = 0, total = 0;
    std::set<std::string> names;
    std::string text;
};

PprofTop go_pprof_top(const std::filesystem::path& file) {
    PprofTop top;
    top.text =
        test::shell_output(fmt::format("go tool pprof -top -sample_index=inuse_space -unit=B -nodecount=1000000 "
                                       "-nodefraction=0 -edgefraction=0 {} 2>&1",
                                       test::quote(file)));
    std::smatch m;
    static const std::regex header(R"(Showing nodes accounting for (-?[0-9]+)B?, [-0-9.]+% of (-?[0-9]+)B? total)");
    if (std::regex_search(top.text, m, header)) {
        top.accounted = std::stoll(m[1]);
        top.total = std::stoll(m[2]);
    }
    // Shares as pprof prints them: "89.34%", "1.5e-05%".
    static const std::regex row(R"(^ *-?[0-9]+B? +[-+0-9.e]+% +[-+0-9.e]+% +-?[0-9]+B? +[-+0-9.e]+% +(.*)$)");
    std::istringstream in(top.text);
    for (std::string line; std::getline(in, line);)
        if (std::regex_match(line, m, row)) top.names.insert(m[1]);
    return top;
}

void check_go_pprof(const std::vector<Picture>& pictures, const std::filesystem::path& dir) {
    for (const auto& p : pictures) {
        CAPTURE(p.name);
        const auto pprof = dir / (p.name + ".pb.gz");
        const auto r = test::run_memsnap(p.command + " --format pprof");
        REQUIRE((r.exit_code == 0 || r.exit_code == 3));
        std::ofstream(pprof, std::ios::binary) << r.out;
        const auto folded = test::run_memsnap(p.command + " --format folded");
        const auto top = go_pprof_top(pprof);
        CAPTURE(top.text.substr(0, 2000));
        CHECK(top.text.find("Type: inuse_space") != std::string::npos);
        // Every node is listed, so what it accounts for is the sum of all samples: the live
        // bytes, a side, or the change (growth less shrinkage).
        CHECK(top.accounted == p.bytes);
        if (!p.change) CHECK(top.total == p.bytes);
        // Every Python frame memsnap drew is there as memsnap spelt it ([module], [no stack]).
        if (!p.change) CHECK(includes(top.names, pprof_python_names(folded.out)));
    }
}

std::string chromium() {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
        if (test::have_program(name)) return name;
    return "";
}

// Why speedscope cannot run here, or "".
std::string speedscope_missing() {
    const std::filesystem::path modules = MEMSNAP_NODE_MODULES;
    if (!test::have_program("node")) return "node is not installed: speedscope was not run";
    if (chromium().empty()) return "chromium is not installed: speedscope's importer was not run";
    if (!std::filesystem::exists(modules / "speedscope" / "dist" / "release"))
        return modules.string() + "/speedscope is absent (npm install --prefix " + modules.parent_path().string() +
               " speedscope): speedscope was not run";
    return "";
}

// Each picture's folded and pprof output read by speedscope in one page load: its total is
// the bytes (for folded, a diff's growth is what it draws), and its frames memsnap's.
void check_speedscope(const std::vector<Picture>& pictures, const std::filesystem::path& dir) {
    std::vector<std::string> files;
    struct Expected {
        std::int64_t bytes = 0;
        std::set<std::string> frames;  // folded: all of them; pprof: at least these
        bool pprof = false;
    };
    std::map<std::string, Expected> expected;
    for (const auto& p : pictures) {
        if (p.change) continue;  // speedscope draws no negative weights: the sides only
        const auto folded = test::run_memsnap(p.command + " --format folded");
        REQUIRE((folded.exit_code == 0 || folded.exit_code == 3));
        if (folded.out.empty()) continue;  // nothing drawn: no profile to open
        std::ofstream(dir / (p.name + ".folded")) << folded.out;
        const auto pprof = test::run_memsnap(p.command + " --format pprof");
        REQUIRE((pprof.exit_code == 0 || pprof.exit_code == 3));
        std::ofstream(dir / (p.name + ".pb.gz"), std::ios::binary) << pprof.out;
        expected[p.name + ".folded"] = {p.bytes, folded_frames(folded.out), false};
        expected[p.name + ".pb.gz"] = {p.bytes, pprof_python_names(folded.out), true};
        files.push_back(test::quote(dir / (p.name + ".folded")));
        files.push_back(test::quote(dir / (p.name + ".pb.gz")));
    }
    REQUIRE(!files.empty());
    std::string list;
    for (const auto& f : files) list += " " + f;
    const std::filesystem::path modules = MEMSNAP_NODE_MODULES;
    const auto out = test::shell_output(fmt::format(
        "node {} {} {} {}{} 2>&1", test::quote(test::source_dir() / "tests" / "consumers" / "speedscope_import.mjs"),
        test::quote(modules / "speedscope"), chromium(), test::quote(dir / "speedscope"), list));
    json read;
    REQUIRE_NOTHROW(read = json::parse(out));
    std::size_t seen = 0;
    for (const auto& file : read.at("files")) {
        const auto name = file.at("file").get<std::string>();
        CAPTURE(name);
        REQUIRE(expected.count(name) == 1);
        const auto& want = expected[name];
        REQUIRE(file.at("profiles").size() == 1);
        const auto& profile = file.at("profiles")[0];
        CHECK(profile.at("total").get<std::int64_t>() == want.bytes);
        CHECK(profile.at("unit").get<std::string>() == (want.pprof ? "bytes" : "none"));
        std::set<std::string> frames;
        for (const auto& f : profile.at("frames")) frames.insert(f[0].get<std::string>());
        if (want.pprof)
            CHECK(includes(frames, want.frames));
        else
            CHECK(frames == want.frames);
        ++seen;
    }
    CHECK(seen == files.size());
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("go tool pprof reads the pprof of every fixture and pair with memsnap's bytes") {
        if (!test::have_program("go")) MEMSNAP_SKIP("go is not installed (Debian golang-go): pprof not run");
        const auto dir = work_dir("go_pprof");
        check_go_pprof(pictures_of(fixture_captures(), fixture_pairs(), false), dir);
        std::filesystem::remove_all(dir);
    }

    TEST_CASE("speedscope reads the folded and pprof output of every fixture and pair with memsnap's bytes") {
        if (const auto why = speedscope_missing(); !why.empty()) MEMSNAP_SKIP(why);
        const auto dir = work_dir("speedscope");
        check_speedscope(pictures_of(fixture_captures(), fixture_pairs(), false), dir);
        std::filesystem::remove_all(dir);
    }
}

TEST_SUITE("real") {
    TEST_CASE("go tool pprof reads the pprof of every real capture with memsnap's bytes") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        if (!test::have_program("go")) MEMSNAP_SKIP("go is not installed (Debian golang-go): pprof not run");
        const auto dir = work_dir("go_pprof_real");
        check_go_pprof(pictures_of(real_captures(), real_pairs(), true), dir);
        std::filesystem::remove_all(dir);
    }

    TEST_CASE("speedscope reads the folded and pprof output of every real capture with memsnap's bytes") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        if (const auto why = speedscope_missing(); !why.empty()) MEMSNAP_SKIP(why);
        const auto dir = work_dir("speedscope_real");
        check_speedscope(pictures_of(real_captures(), real_pairs(), true), dir);
        std::filesystem::remove_all(dir);
    }
}
