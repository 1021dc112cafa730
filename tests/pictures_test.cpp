// Pictures and interop: folded stacks, the SVG flame graph and timelines (well-formed XML),
// DOT (accepted by Graphviz), the self-contained HTML report (headless Chromium: no console
// error, no network request), pprof (decoded back here), and captures as people share them
// (.gz, .zst, _memory_viz.py pages) read exactly as the plain file.

#include "analysis_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <sstream>

using namespace memsnap;

namespace {

snapshot::Snapshot relative(const std::string& path) {
    auto s = snapshot::load_snapshot((test::source_dir() / path).string());
    s.source.path = path;
    return s;
}

analysis::SnapshotDiff leak_diff() {
    auto options = test::all_sites();
    options.top = 10;
    options.steps = util::resolve_steps("", "run_step100.pickle", "run_step500.pickle");
    options.stack_samples = analysis::StackSamples::all;
    return analysis::diff_snapshots(relative("fixtures/pairs/leak/run_step100.pickle"),
                                    relative("fixtures/pairs/leak/run_step500.pickle"), options);
}

// Parses `svg` as XML: throws on anything malformed.
void check_xml(const std::string& svg) {
    std::istringstream in(svg);
    boost::property_tree::ptree tree;
    CHECK_NOTHROW(boost::property_tree::read_xml(in, tree));
    CHECK(tree.count("svg") == 1);
}

std::string gunzip(const std::string& data) {
    z_stream z{};
    REQUIRE(inflateInit2(&z, 15 + 32) == Z_OK);
    std::string out(1 << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    std::size_t used = 0;
    int rc = Z_OK;
    while (rc == Z_OK) {
        if (used == out.size()) out.resize(out.size() * 2);
        z.next_out = reinterpret_cast<Bytef*>(out.data() + used);
        z.avail_out = static_cast<uInt>(out.size() - used);
        rc = inflate(&z, Z_NO_FLUSH);
        used = out.size() - z.avail_out;
    }
    inflateEnd(&z);
    REQUIRE(rc == Z_STREAM_END);
    out.resize(used);
    return out;
}

// A protobuf message as its fields: number -> values (varints, or bytes of length-delimited).
struct Fields {
    std::multimap<int, std::uint64_t> varints;
    std::multimap<int, std::string> bytes;
};

std::uint64_t varint(std::string_view in, std::size_t& pos) {
    std::uint64_t v = 0;
    for (int shift = 0; pos < in.size(); shift += 7) {
        const auto b = static_cast<unsigned char>(in[pos++]);
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
    }
    FAIL("varint runs past the end");
    return v;
}

Fields decode(std::string_view in) {
    Fields f;
    for (std::size_t pos = 0; pos < in.size();) {
        const auto key = varint(in, pos);
        const int field = static_cast<int>(key >> 3), wire = static_cast<int>(key & 7);
        if (wire == 0) {
            f.varints.emplace(field, varint(in, pos));
        } else if (wire == 2) {
            const auto n = varint(in, pos);
            REQUIRE(pos + n <= in.size());
            f.bytes.emplace(field, std::string(in.substr(pos, n)));
            pos += n;
        } else {
            FAIL("unexpected wire type " << wire);
        }
    }
    return f;
}

std::vector<std::int64_t> packed(const std::string& bytes) {
    std::vector<std::int64_t> out;
    for (std::size_t pos = 0; pos < bytes.size();) out.push_back(static_cast<std::int64_t>(varint(bytes, pos)));
    return out;
}

std::string run(const std::string& command) {
    std::string out;
    if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
        char buffer[4096];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, p)) > 0;) out.append(buffer, n);
        if (::pclose(p) != 0) out = "FAILED: " + out;
    }
    return out;
}

// The texts of an SVG that run past its 1200-pixel canvas, left-aligned ones measured as
// monospace (0.6 em a character, 11 pixels unless the element says).
std::vector<std::string> texts_past_canvas(const std::string& svg) {
    static const std::regex text(R"re(<text x="([0-9.]+)" y="[0-9.]+"([^>]*)>([^<]*)</text>)re");
    static const std::regex size(R"re(font-size="([0-9]+)")re");
    static const std::regex entity("&[a-z#0-9]+;");
    std::vector<std::string> out;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), text); it != std::sregex_iterator(); ++it) {
        const auto& m = *it;
        const std::string attributes = m[2];
        if (attributes.find("text-anchor") != std::string::npos) continue;
        std::smatch font;
        const double em = std::regex_search(attributes, font, size) ? std::stod(font[1]) : 11;
        const std::string shown = std::regex_replace(std::string(m[3]), entity, "&");
        const auto chars = static_cast<double>(std::count_if(
            shown.begin(), shown.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
        if (std::stod(m[1]) + chars * 0.6 * em > 1200) out.push_back(shown);
    }
    return out;
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("pictures of a diff: folded for each side / a differential flame graph / DOT / golden") {
        const auto d = leak_diff();
        report::RenderOptions options;
        for (const auto& [side, name] :
             {std::pair{analysis::Side::delta, "delta"}, std::pair{analysis::Side::before, "before"},
              std::pair{analysis::Side::after, "after"}}) {
            options.side = side;
            const auto folded = report::render(analysis::diff_stacks(d), report::Format::folded, options);
            test::check_golden(fmt::format("pictures/leak_{}.folded", name), folded);
            // The lines add up to the side's bytes.
            std::int64_t sum = 0;
            std::istringstream lines(folded);
            for (std::string line; std::getline(lines, line);) sum += std::stoll(line.substr(line.rfind(' ') + 1));
            std::int64_t expected = 0;
            for (const auto& s : d.stack_samples)
                expected += std::max<std::int64_t>(0, side == analysis::Side::before  ? s.base_bytes
                                                      : side == analysis::Side::after ? s.bytes
                                                                                      : s.delta_bytes());
            CHECK(sum == expected);
        }
        options.side = analysis::Side::delta;
        const auto svg = report::render(analysis::diff_stacks(d), report::Format::svg, options);
        check_xml(svg);
        test::check_golden("pictures/leak_growth.svg", svg);
        // The README's picture is this one.
        CHECK(test::read_text(test::source_dir() / "docs" / "leak-growth.svg") == svg);
        CHECK(svg.find("<script") == std::string::npos);
        CHECK(svg.find("train_step (/home/user/project/train.py:57)") != std::string::npos);
        // Growth and shrinkage both drawn: every box carries its signed change, the stack that
        // shrank is drawn blue, and the subtitle gives both.
        CHECK(svg.find("<g data-delta=\"-3145728\"><title>update (/home/user/project/metrics.py:22)") !=
              std::string::npos);
        CHECK(svg.find("rgb(219,219,235)") != std::string::npos);
        CHECK(svg.find("+802.25 MiB grew, -3.00 MiB shrank") != std::string::npos);
        std::size_t boxes = 0, with_delta = 0;
        for (auto at = svg.find("<g"); at != std::string::npos; at = svg.find("<g", at + 1)) {
            ++boxes;
            with_delta += svg.compare(at, 14, "<g data-delta=") == 0;
        }
        CHECK(boxes > 0);
        CHECK(with_delta == boxes);
        const auto dot = report::render(analysis::diff_stacks(d), report::Format::dot, options);
        test::check_golden("pictures/leak_growth.dot", dot);
        CHECK(dot.find("digraph") != std::string::npos);
        // One level of escaping: Graphviz reads "\n" as a line break, "\\n" as a backslash and an n.
        CHECK(dot.find("\\n") != std::string::npos);
        CHECK(dot.find("\\\\n") == std::string::npos);
    }

    TEST_CASE("the DOT of a diff is accepted by Graphviz") {
        if (!test::have_program("dot")) MEMSNAP_SKIP("Graphviz (dot) is not installed: DOT not checked with dot");
        report::RenderOptions options;
        options.side = analysis::Side::delta;
        const auto dot = report::render(analysis::diff_stacks(leak_diff()), report::Format::dot, options);
        const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_{}.dot", ::getpid());
        std::ofstream(path) << dot;
        CHECK(run(fmt::format("dot -Tsvg '{}' -o /dev/null", path.string())).empty());
        std::filesystem::remove(path);
    }

    TEST_CASE("pictures of one snapshot and of a trace: flame graphs / the timeline / golden") {
        const auto snap = relative("fixtures/pairs/leak/run_step500.pickle");
        const auto live = analysis::live_stacks(snap, {});
        const auto svg = report::render(live, report::Format::svg, {});
        check_xml(svg);
        test::check_golden("pictures/live.svg", svg);
        test::check_golden("pictures/live.folded", report::render(live, report::Format::folded, {}));
        std::int64_t live_bytes = 0;
        for (const auto& s : live.samples) live_bytes += s.bytes;
        CHECK(live_bytes == analysis::compute_totals(snap).allocated_bytes);

        const auto loop = relative("fixtures/snapshots/oom_loop.pickle");
        analysis::AnalysisOptions options;
        const auto trace = analysis::analyze_trace(loop, options);
        const auto timeline = report::render_timeline_svg(trace);
        check_xml(timeline);
        test::check_golden("pictures/oom_loop_timeline.svg", timeline);
        CHECK(timeline.find(">OOM<") != std::string::npos);
        const auto peak = analysis::trace_stacks(loop, options, true);
        std::int64_t at_peak = 0;
        for (const auto& s : peak.samples) at_peak += s.bytes;
        CHECK(at_peak == trace.peak.bytes);
        test::check_golden("pictures/oom_loop_peak.folded", report::render(peak, report::Format::folded, {}));
    }

    TEST_CASE("SVG titles and labels stay on the canvas: a long file name / a long site") {
        const std::string long_dir = "fixtures/" + std::string(150, 'd') + "/";
        auto loop = relative("fixtures/snapshots/oom_loop.pickle");
        loop.source.path = long_dir + "oom_loop.pickle";
        const auto trace = analysis::analyze_trace(loop, {});
        const auto timeline = report::render_timeline_svg(trace);
        REQUIRE(timeline.find("ddddd") != std::string::npos);
        CHECK(texts_past_canvas(timeline).empty());

        analysis::TrendResult t;
        t.steps = {100, 200, 300};
        t.steps_source = "file names";
        t.files = {long_dir + "a_step100.pickle", long_dir + "a_step200.pickle", long_dir + "a_step300.pickle"};
        t.points = {{0, 100}, {1, 200}, {2, 300}};
        analysis::TrendSeries allocated;
        allocated.name = "allocated_bytes";
        allocated.bytes = {1 << 20, 2 << 20, 3 << 20};
        t.totals.push_back(allocated);
        analysis::TrendSite site;
        site.site.filename = "/home/user/" + std::string(200, 'p') + "/train.py";
        site.site.line = 57;
        site.site.name = "train_step";
        site.bytes_by_step = allocated.bytes;
        site.blocks_by_step = {1, 2, 3};
        t.sites.push_back(site);
        const auto svg = report::render_timeline_svg(t);
        check_xml(svg);
        REQUIRE(svg.find("green: /home/user/ppp") != std::string::npos);
        CHECK(texts_past_canvas(svg).empty());
        const auto live = analysis::live_stacks(loop, {});
        CHECK(texts_past_canvas(report::render(live, report::Format::svg, {})).empty());
    }

    TEST_CASE("pprof: the profile decodes back to the diff's stacks and bytes") {
        const auto d = leak_diff();
        const auto profile = decode(gunzip(report::render(analysis::diff_stacks(d), report::Format::pprof, {})));
        std::vector<std::string> strings;
        for (auto [it, end] = profile.bytes.equal_range(6); it != end; ++it) strings.push_back(it->second);
        REQUIRE(!strings.empty());
        CHECK(strings.front().empty());
        // Sample types: inuse_space/bytes, inuse_objects/count.
        std::vector<std::pair<std::string, std::string>> types;
        for (auto [it, end] = profile.bytes.equal_range(1); it != end; ++it) {
            const auto vt = decode(it->second);
            types.emplace_back(strings.at(vt.varints.find(1)->second), strings.at(vt.varints.find(2)->second));
        }
        CHECK(types ==
              std::vector<std::pair<std::string, std::string>>{{"inuse_space", "bytes"}, {"inuse_objects", "count"}});
        // pprof and its viewers open on bytes: default_sample_type (field 14) names inuse_space.
        REQUIRE(profile.varints.count(14) == 1);
        CHECK(strings.at(profile.varints.find(14)->second) == "inuse_space");
        // Names survive pprof's simplification, which drops "<...>" as template arguments.
        CHECK(std::find(strings.begin(), strings.end(), "[module]") != strings.end());
        CHECK(std::find(strings.begin(), strings.end(), "<module>") == strings.end());
        // The sum of the samples is the change (after positive, before negative).
        std::int64_t bytes = 0, objects = 0;
        std::size_t samples = 0;
        std::set<std::int64_t> locations_used;
        for (auto [it, end] = profile.bytes.equal_range(2); it != end; ++it) {
            const auto sample = decode(it->second);
            const auto values = packed(sample.bytes.find(2)->second);
            REQUIRE(values.size() == 2);
            bytes += values[0];
            objects += values[1];
            for (const auto l : packed(sample.bytes.find(1)->second)) locations_used.insert(l);
            ++samples;
        }
        CHECK(bytes == d.totals.allocated.delta);
        CHECK(objects == d.live_blocks_after - d.live_blocks_before);
        CHECK(samples > 0);
        // Every location used exists, and names a function with a file name.
        std::map<std::int64_t, std::string> function_name;
        for (auto [it, end] = profile.bytes.equal_range(5); it != end; ++it) {
            const auto f = decode(it->second);
            function_name[static_cast<std::int64_t>(f.varints.find(1)->second)] = strings.at(f.varints.find(2)->second);
        }
        std::set<std::int64_t> locations;
        for (auto [it, end] = profile.bytes.equal_range(4); it != end; ++it)
            locations.insert(static_cast<std::int64_t>(decode(it->second).varints.find(1)->second));
        for (const auto l : locations_used) CHECK(locations.count(l) == 1);
        bool named = false;
        for (const auto& [id, name] : function_name) named = named || name == "train_step";
        CHECK(named);
        // A readable golden of the decoded profile.
        std::string text;
        for (const auto& [id, name] : function_name) text += fmt::format("function {} {}\n", id, name);
        text += fmt::format("samples {} bytes {} objects {}\n", samples, bytes, objects);
        test::check_golden("pictures/leak.pprof.txt", text);
    }

    TEST_CASE("HTML shows backticked code in sentences as <code> / escaped first / an unpaired backtick as is") {
        report::Document d;
        d.kind = "test";
        d.title = "advice";
        auto& list = d.root.add(report::Node::list("advice", report::Layout::bullets, "advice"));
        for (const char* text : {"use `loss.item()` instead of `loss`", "keep `a<b && c>d` here",
                                 "one ` alone, then `x`", "an empty `` pair, then `y` and a last `"}) {
            auto& item = list.add(report::Node::object("", report::Layout::line));
            item.add("text", report::Value::text_of(text));
        }
        const auto html = report::render(d, report::Format::html);
        CHECK(html.find("<li>use <code>loss.item()</code> instead of <code>loss</code></li>") != std::string::npos);
        CHECK(html.find("<li>keep <code>a&lt;b &amp;&amp; c&gt;d</code> here</li>") != std::string::npos);
        CHECK(html.find("<li>one <code> alone, then </code>x`</li>") != std::string::npos);  // pairs in order
        CHECK(html.find("<li>an empty `` pair, then <code>y</code> and a last `</li>") != std::string::npos);
        // Markdown reads the backticks itself; text keeps them.
        CHECK(report::render(d, report::Format::markdown).find("`loss.item()`") != std::string::npos);
        CHECK(report::render(d, report::Format::text).find("`loss.item()`") != std::string::npos);
    }

    TEST_CASE("a .gz / a .zst and a _memory_viz.py page give what the plain file gives") {
        const auto dir = test::fixtures_dir() / "snapshots";
        const auto plain_text = test::read_text(dir / "gen_torch2.5_settings_p4.pickle");
        const auto strip = [](const std::string& json) {
            auto j = nlohmann::json::parse(json);
            j.erase("file");
            j.erase("path");
            return j;
        };
        const auto info = [&](const std::filesystem::path& p) {
            const auto r = test::run_memsnap("info --format json --top 0 " + test::quote(p));
            REQUIRE(r.exit_code == 0);
            return strip(r.out);
        };
        const auto plain = info(dir / "gen_torch2.5_settings_p4.pickle");
        CHECK(info(dir / "gen_torch2.5_settings.pickle.gz") == plain);
        CHECK(info(dir / "gen_torch2.5_settings_viz.html") == plain);
        // zstd, made here with libzstd.
        std::string zst(ZSTD_compressBound(plain_text.size()), '\0');
        zst.resize(ZSTD_compress(zst.data(), zst.size(), plain_text.data(), plain_text.size(), 3));
        const auto tmp = std::filesystem::temp_directory_path() / fmt::format("memsnap_{}.pickle.zst", ::getpid());
        std::ofstream(tmp, std::ios::binary) << zst;
        CHECK(info(tmp) == plain);
        // Damaged: cut short, with the byte offset; a bomb is refused.
        std::ofstream(tmp, std::ios::binary) << zst.substr(0, zst.size() / 2);
        const auto cut = test::run_memsnap("info " + test::quote(tmp));
        CHECK(cut.exit_code == 2);
        CHECK(cut.err.find("zstd data is cut short") != std::string::npos);
        const std::string zeros(std::size_t{200} << 20, '\0');
        std::string bomb(ZSTD_compressBound(zeros.size()), '\0');
        bomb.resize(ZSTD_compress(bomb.data(), bomb.size(), zeros.data(), zeros.size(), 19));
        std::ofstream(tmp, std::ios::binary) << bomb;
        const auto refused = test::run_memsnap("info " + test::quote(tmp));
        CHECK(refused.exit_code == 2);
        CHECK(refused.err.find("decompression bomb") != std::string::npos);
        std::filesystem::remove(tmp);
        const auto gz = test::read_text(dir / "gen_torch2.5_settings.pickle.gz");
        const auto tmp_gz = std::filesystem::temp_directory_path() / fmt::format("memsnap_{}.pickle.gz", ::getpid());
        std::ofstream(tmp_gz, std::ios::binary) << gz.substr(0, gz.size() - 40);
        const auto gz_cut = test::run_memsnap("info " + test::quote(tmp_gz));
        CHECK(gz_cut.exit_code == 2);
        CHECK(gz_cut.err.find("byte") != std::string::npos);
        std::filesystem::remove(tmp_gz);
    }

}  // TEST_SUITE("unit")

TEST_SUITE("cli") {
    // Run from the checkout with relative paths, as the README does: the golden names them.
    const std::string in_checkout = "cd " + test::quote(test::source_dir()) + " &&";
    const char* const html_diff =
        "diff --format html fixtures/pairs/leak/run_step100.pickle fixtures/pairs/leak/run_step500.pickle";
    const char* const html_trace = "trace --format html fixtures/snapshots/oom_loop.pickle";

    TEST_CASE("the HTML report: golden / self-contained / a trace's holds a timeline") {
        const auto html = test::run_memsnap(html_diff, in_checkout);
        REQUIRE(html.exit_code == 0);
        test::check_golden("pictures/leak_report.html", html.out);
        CHECK(html.out.find("Content-Security-Policy") != std::string::npos);
        for (const char* loaded : {"src=", "href=", "@import", "url("})
            CHECK(html.out.find(loaded) == std::string::npos);
        for (const char* part : {"Verdict", "Totals", "Categories", "<details>", "<svg"})
            CHECK(html.out.find(part) != std::string::npos);
        // Trace and trend reports hold a timeline too.
        const auto trace = test::run_memsnap(html_trace, in_checkout);
        REQUIRE(trace.exit_code == 0);
        CHECK(trace.out.find("memory timeline") != std::string::npos);
    }

    TEST_CASE("the HTML report in headless Chromium: long unbroken lines wrap within the page") {
        std::string chromium;
        for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
            if (test::have_program(name)) chromium = name;
        if (chromium.empty()) MEMSNAP_SKIP("chromium is not installed: the HTML layout was not checked");
        const std::string path = "/home/user/" + std::string(300, 'p') + "/train.py:57";
        report::Document d;
        d.kind = "test";
        d.title = "long lines";
        d.root.add("site", report::Value::text_of(path));  // a table cell
        auto& notes = d.root.add(report::Node::list("notes", report::Layout::bullets, "notes"));
        notes.add(report::Node::object("", report::Layout::line)).add("text", report::Value::text_of(path));
        auto& stack = d.root.add(report::Node::list("stack", report::Layout::stack, "stack"));
        stack.add(report::Node::of("", report::Value::text_of(path)));  // a <pre> line
        auto html = report::render(d, report::Format::html);
        REQUIRE(html.find("<pre>") != std::string::npos);
        // The page measures itself into its title: scripts allowed here only.
        const auto csp = html.find("<meta http-equiv=\"Content-Security-Policy\"");
        REQUIRE(csp != std::string::npos);
        html.erase(csp, html.find('>', csp) + 1 - csp);
        html.insert(html.rfind("</body>"),
                    "<script>let over = 0; for (const e of document.querySelectorAll('*')) over = Math.max(over, "
                    "e.scrollWidth - e.clientWidth); document.title = 'page ' + document.documentElement.scrollWidth + "
                    "' of ' + document.documentElement.clientWidth + ', overflow ' + over;</script>");
        const auto file = std::filesystem::path(MEMSNAP_BUILD_DIR) / "long_lines.html";
        std::ofstream(file) << html;
        for (const int width : {1280, 640}) {
            CAPTURE(width);
            const auto dom =
                run(fmt::format("timeout 120 {} --headless=new --no-sandbox --disable-gpu --no-first-run "
                                "--disable-extensions --disable-background-networking --window-size={},2000 "
                                "--dump-dom 'file://{}'",
                                chromium, width, file.string()));
            const auto at = dom.find("<title>page ");
            REQUIRE(at != std::string::npos);
            const auto title = dom.substr(at + 7, dom.find("</title>", at) - at - 7);
            CAPTURE(title);
            long page = 0, shown = 0, over = 0;
            REQUIRE(std::sscanf(title.c_str(), "page %ld of %ld, overflow %ld", &page, &shown, &over) == 3);
            CHECK(page == shown);
            CHECK(over == 0);
        }
    }

    TEST_CASE("the HTML report loads in headless Chromium: no console error / no network request") {
        std::string chromium;
        for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
            if (test::have_program(name)) chromium = name;
        if (chromium.empty()) MEMSNAP_SKIP("chromium is not installed: the HTML report was not loaded in a browser");
        const auto build = std::filesystem::path(MEMSNAP_BUILD_DIR);
        const auto html = test::run_memsnap(html_diff, in_checkout);
        REQUIRE(html.exit_code == 0);
        std::ofstream(build / "leak_report.html") << html.out;
        const auto trace = test::run_memsnap(html_trace, in_checkout);
        REQUIRE(trace.exit_code == 0);
        std::ofstream(build / "oom_loop_report.html") << trace.out;
        const auto load = [&](const std::filesystem::path& file, const std::string& shot) {
            const auto netlog = build / (shot + ".netlog.json");
            const auto log = run(fmt::format(
                "timeout 120 {} --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions "
                "--disable-background-networking --disable-component-update --disable-sync --enable-logging=stderr "
                "--v=0 --log-net-log='{}' --window-size=1280,2000 --screenshot='{}' 'file://{}'",
                chromium, netlog.string(), (build / shot).string(), file.string()));
            return std::pair{log, test::read_text(netlog)};
        };
        // The check itself works: a page that logs an error and fetches a URL shows both.
        const auto control = build / "control.html";
        std::ofstream(control) << "<!DOCTYPE html><html><body><script>console.error('memsnap-control');</script>"
                                  "<img src=\"http://127.0.0.1:9/x.png\"></body></html>";
        const auto [control_log, control_net] = load(control, "control.png");
        CHECK(control_log.find("memsnap-control") != std::string::npos);
        CHECK(control_net.find("http://127.0.0.1:9/x.png") != std::string::npos);
        CHECK(control_net.find("HeadlessChrome") != std::string::npos);
        for (const char* report : {"leak_report.html", "oom_loop_report.html"}) {
            CAPTURE(report);
            const auto [log, net] = load(build / report, std::string(report) + ".png");
            CHECK(log.find("CONSOLE") == std::string::npos);
            CHECK(log.find("Refused") == std::string::npos);
            // Requests the page makes carry its User-Agent; the browser's own (updates, time)
            // do not.
            CHECK(net.find("HeadlessChrome") == std::string::npos);
            CHECK(std::filesystem::file_size(build / (std::string(report) + ".png")) > 10000);  // the screenshot
        }
    }

}  // TEST_SUITE("cli")

namespace {

// {'segments': [], 'a': 'x' * 40 MiB, 'b': 'x' * 40 MiB}, written by hand: PROTO 4, a dict;
// with `random`, 'a' is random letters (which compress about 1.6 times, not 1000).
std::string big_pickle(bool random = false) {
    std::string pickle = "\x80\x04}(\x8c\x08segments]";
    const std::uint32_t length = 40u << 20;
    std::mt19937 letters(7);
    for (const char key : {'a', 'b'}) {
        pickle += "\x8c\x01";
        pickle += key;
        pickle += 'X';
        for (int b = 0; b < 4; ++b) pickle += static_cast<char>((length >> (8 * b)) & 0xff);
        if (random && key == 'a')
            for (std::uint32_t i = 0; i < length; ++i) pickle += static_cast<char>('a' + letters() % 26);
        else
            pickle += std::string(length, 'x');
    }
    pickle += "u.";
    return pickle;
}

// A pickle of 80 MiB, over the size from which reading shows progress on a terminal.
std::filesystem::path write_big_pickle(const std::string& name = "big") {
    const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_{}_{}.pickle", name, ::getpid());
    std::ofstream(path, std::ios::binary) << big_pickle();
    return path;
}

// The lines a terminal was shown, each as last drawn before a carriage return or newline.
std::vector<std::string> terminal_lines(const std::string& shown) {
    std::vector<std::string> out;
    std::string line;
    for (const char c : shown) {
        if (c != '\r' && c != '\n') {
            line += c;
            continue;
        }
        if (line.starts_with("\x1b[K")) line.erase(0, 3);
        if (!line.empty()) out.push_back(line);
        line.clear();
    }
    return out;
}

}  // namespace

TEST_SUITE("cli") {
    TEST_CASE("reading a pickle over 64 MiB shows nothing when not on a terminal") {
        const auto path = write_big_pickle();
        const auto quiet = test::run_memsnap("info " + test::quote(path));
        CAPTURE(quiet.err);
        CHECK(quiet.exit_code == 0);
        CHECK(quiet.err.empty());
        std::filesystem::remove(path);
    }

    TEST_CASE("reading a pickle over 64 MiB shows progress on a terminal") {
        if (!test::have_program("script"))
            MEMSNAP_SKIP("script (util-linux) is not installed: the terminal case was not checked");
        const auto path = write_big_pickle();
        const auto shown = run(fmt::format("script -qfec \"{} info '{}'\" /dev/null", MEMSNAP_BINARY, path.string()));
        CHECK(shown.find("memsnap: reading") != std::string::npos);
        CHECK(shown.find("80.00 MiB") != std::string::npos);
        CHECK(shown.find("\x1b[K") != std::string::npos);  // the line is cleared after
        std::filesystem::remove(path);
    }

    TEST_CASE("a gzip capture shows one progress line that moves as it is decompressed and read on a terminal") {
        if (!test::have_program("script"))
            MEMSNAP_SKIP("script (util-linux) is not installed: the terminal case was not checked");
        const auto path = std::filesystem::temp_directory_path() / fmt::format("memsnap_big_{}.pickle.gz", ::getpid());
        const auto pickle = big_pickle(true);
        gzFile gz = gzopen(path.c_str(), "wb1");
        REQUIRE(gz != nullptr);
        REQUIRE(gzwrite(gz, pickle.data(), static_cast<unsigned>(pickle.size())) == static_cast<int>(pickle.size()));
        gzclose(gz);
        REQUIRE(std::filesystem::file_size(path) > (std::uint64_t{8} << 20));  // worth a progress line
        const auto shown = run(fmt::format("script -qfec \"{} info '{}'\" /dev/null", MEMSNAP_BINARY, path.string()));
        const auto lines = terminal_lines(shown);
        CAPTURE(lines);
        // The pickle is read as it is decompressed: one line, in compressed bytes, shown
        // before the end, and no second stage.
        const std::string prefix = "memsnap: decompressing " + path.string() + ": ";
        bool before_the_end = false;
        for (const auto& line : lines) {
            CHECK(!line.starts_with("memsnap: reading"));
            if (!line.starts_with(prefix)) continue;
            const auto of = line.find(" of ", prefix.size());
            const auto compressed = line.find(" compressed (", prefix.size());
            REQUIRE(of != std::string::npos);
            REQUIRE(compressed != std::string::npos);
            const auto done = line.substr(prefix.size(), of - prefix.size());
            before_the_end = before_the_end || done != line.substr(of + 4, compressed - of - 4);
        }
        CHECK(before_the_end);
        CHECK(shown.find("\x1b[K") != std::string::npos);
        // Not on a terminal: nothing.
        const auto quiet = test::run_memsnap("info " + test::quote(path));
        CHECK(quiet.exit_code == 0);
        CHECK(quiet.err.empty());
        std::filesystem::remove(path);
    }

    TEST_CASE("diff of two large captures: the progress line never takes turns between the files") {
        if (!test::have_program("script"))
            MEMSNAP_SKIP("script (util-linux) is not installed: the terminal case was not checked");
        const auto before = write_big_pickle("before"), after = write_big_pickle("after");
        const auto shown = run(fmt::format("script -qfec \"{} diff '{}' '{}'\" /dev/null", MEMSNAP_BINARY,
                                           before.string(), after.string()));
        const auto lines = terminal_lines(shown);
        CAPTURE(lines);
        // Each progress line names one file or counts both; a file named again after the
        // other was named would be the flicker.
        std::vector<std::string> named;
        bool any = false;
        for (const auto& line : lines) {
            if (!line.starts_with("memsnap: reading")) continue;
            any = true;
            for (const auto& file : {before.string(), after.string()})
                if (line.find(file) != std::string::npos && (named.empty() || named.back() != file))
                    named.push_back(file);
            if (line.find("reading 2 files: ") != std::string::npos)
                CHECK(line.find("of 160.00 MiB") != std::string::npos);
        }
        CHECK(any);
        CHECK(named.size() <= 2);
        std::filesystem::remove(before);
        std::filesystem::remove(after);
    }

}  // TEST_SUITE("cli")

TEST_SUITE("unit") {
    TEST_CASE("pictures normalise stacks as the text does: interpreter frames dropped and no stack labelled") {
        analysis::StackProfile p;
        p.subject = {analysis::ProfileSubject::Kind::live, "live.pickle", {}, 0, 0};
        p.measure = "live bytes";
        p.frame_table = {{"/usr/lib/libpython3.10.so", 0, "Py_BytesMain", false},
                         {"/home/u/train.py", 10, "step", true},
                         {"/usr/lib/libtorch.so", 0, "wrap_kernel_functor_unboxed_", false}};
        analysis::ProfileSample python;  // innermost first: the dispatcher, the Python frame, the interpreter
        python.frames = {2, 1, 0};
        python.bytes = 4096;
        python.count = 1;
        analysis::ProfileSample only_cpp;
        only_cpp.frames = {2};
        only_cpp.bytes = 512;
        only_cpp.count = 1;
        analysis::ProfileSample no_stack;
        no_stack.bytes = 1024;
        no_stack.count = 2;
        p.samples = {python, only_cpp, no_stack};
        report::RenderOptions options;
        const auto folded = report::render(p, report::Format::folded, options);
        CHECK(folded.find("step (/home/u/train.py:10) 4096") != std::string::npos);
        CHECK(folded.find("Py_BytesMain") == std::string::npos);
        // A stack with no Python frame keeps what it has; blocks with no stack are one labelled frame.
        CHECK(folded.find("wrap_kernel_functor_unboxed_ (/usr/lib/libtorch.so) 512") != std::string::npos);
        CHECK(folded.find("<no stack> 1024") != std::string::npos);
        const auto svg = report::render(p, report::Format::svg, options);
        CHECK(svg.find("&lt;no stack&gt;") != std::string::npos);
        CHECK(svg.find("Py_BytesMain") == std::string::npos);
        options.cpp_frames = true;
        CHECK(report::render(p, report::Format::folded, options).find("Py_BytesMain") != std::string::npos);
    }

    TEST_CASE("pprof honours --side on a diff") {
        const auto d = leak_diff();
        const auto stacks = analysis::diff_stacks(d);
        const auto total = [&](analysis::Side side) {
            report::RenderOptions options;
            options.side = side;
            const auto profile = decode(gunzip(report::render(stacks, report::Format::pprof, options)));
            std::int64_t bytes = 0;
            for (auto [it, end] = profile.bytes.equal_range(2); it != end; ++it)
                bytes += packed(decode(it->second).bytes.find(2)->second).at(0);
            return bytes;
        };
        CHECK(total(analysis::Side::delta) == d.totals.allocated.delta);
        CHECK(total(analysis::Side::after) == d.totals.allocated.after);
        CHECK(total(analysis::Side::before) == d.totals.allocated.before);
    }
}
