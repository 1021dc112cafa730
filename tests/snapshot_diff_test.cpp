// The snapshot diff: symmetry, exact growth on fixture pairs with known truth, injected leaks
// in real captures, and the text/JSON reports.

#include "analysis_support.hpp"
#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>
#include <memsnap/snapshot/load.hpp>

#include <nlohmann/json.hpp>

#include <map>
#include <sstream>

using namespace memsnap;
using analysis::Answer;
using analysis::Pattern;
using analysis::Verdict;

namespace {

snapshot::Snapshot load_relative(const std::string& relative) {
    const io::MappedFile file((test::source_dir() / relative).string());
    return snapshot::load_snapshot_bytes(file.bytes(), relative);
}

struct Pair {
    std::string dir;
    std::string before, after;
    nlohmann::json expected;
};

std::vector<Pair> fixture_pairs() {
    std::vector<Pair> pairs;
    for (const auto& entry : std::filesystem::directory_iterator(test::fixtures_dir() / "pairs")) {
        Pair p;
        p.dir = entry.path().filename().string();
        p.expected = nlohmann::json::parse(test::read_text(entry.path() / "expected.json"));
        std::vector<std::string> files;
        for (const auto& f : test::files_in(entry.path()))
            if (f.filename() != "expected.json") files.push_back(f.filename().string());
        REQUIRE(files.size() == 2);
        // The earlier step sorts first in every pair's naming style.
        p.before = "fixtures/pairs/" + p.dir + "/" + files[0];
        p.after = "fixtures/pairs/" + p.dir + "/" + files[1];
        pairs.push_back(std::move(p));
    }
    std::sort(pairs.begin(), pairs.end(), [](const Pair& a, const Pair& b) { return a.dir < b.dir; });
    return pairs;
}

using test::with_steps;

std::int64_t sum_site_deltas(const analysis::SnapshotDiff& d) {
    std::int64_t sum = 0;
    for (const auto& s : d.sites) sum += s.delta_bytes;
    return sum;
}

std::vector<snapshot::Snapshot> every_capture() {
    std::vector<snapshot::Snapshot> out;
    for (const auto& f : test::files_in(test::fixtures_dir() / "snapshots", ".pickle"))
        out.push_back(snapshot::load_snapshot(f.string()));
    if (test::have_real())
        for (const auto& f : test::files_in(test::real_dir() / "snapshots", ".pickle"))
            out.push_back(snapshot::load_snapshot(f.string()));
    return out;
}

}  // namespace

TEST_CASE("diff(a / a) shows no growth and the verdict stable" * doctest::test_suite("unit")) {
    for (const auto& snap : every_capture()) {
        CAPTURE(snap.source.path);
        const auto d = analysis::diff_snapshots(snap, snap, with_steps(100, 500));
        CHECK(d.verdict == Verdict::stable);
        for (const auto& field : analysis::TotalsChange::fields()) CHECK((d.totals.*field.member).delta == 0);
        // Only shared trace events show one process; nothing rules it out.
        CHECK(d.comparability.same_process == (test::has_timed_trace(snap) ? Answer::yes : Answer::unknown));
        CHECK(d.advice == std::vector<analysis::Advice>{analysis::Advice::stable_nothing});
        CHECK_FALSE(d.convergence.has_value());
        for (const auto& s : d.sites) {
            CHECK(s.delta_bytes == 0);
            CHECK(s.new_blocks == 0);
            CHECK(s.gone_blocks == 0);
            CHECK(s.verdict == Verdict::stable);
        }
        CHECK(d.survivors == d.live_blocks_before);
    }
}

TEST_CASE("diff(a / b) mirrors diff(b / a) / and site deltas add up to the allocated delta" *
          doctest::test_suite("unit")) {
    for (const auto& pair : fixture_pairs()) {
        CAPTURE(pair.dir);
        const auto a = load_relative(pair.before);
        const auto b = load_relative(pair.after);
        const auto forward = analysis::diff_snapshots(a, b, test::all_sites());
        const auto backward = analysis::diff_snapshots(b, a, test::all_sites());
        std::map<analysis::SiteKey, const analysis::SiteChange*> back;
        for (const auto& s : backward.sites) back[s.site] = &s;
        REQUIRE(forward.sites.size() == backward.sites.size());
        for (const auto& s : forward.sites) {
            CAPTURE(s.site.label());
            REQUIRE(back.count(s.site) == 1);
            const auto& m = *back[s.site];
            CHECK(m.delta_bytes == -s.delta_bytes);
            CHECK(m.delta_blocks == -s.delta_blocks);
            CHECK(m.new_blocks == s.gone_blocks);
            CHECK(m.gone_blocks == s.new_blocks);
            CHECK(m.survivor_blocks == s.survivor_blocks);
        }
        for (const auto& field : analysis::TotalsChange::fields())
            CHECK((forward.totals.*field.member).delta == -(backward.totals.*field.member).delta);
        // Every site is ranked, so the ranked growth is exactly the allocated growth.
        CHECK(sum_site_deltas(forward) == forward.totals.allocated.delta);
        CHECK(sum_site_deltas(backward) == backward.totals.allocated.delta);
    }
}

TEST_CASE("fixture pairs: verdicts / leak sites and growth per step exact to the byte" * doctest::test_suite("unit")) {
    for (const auto& pair : fixture_pairs()) {
        CAPTURE(pair.dir);
        const auto& e = pair.expected;
        const auto steps = e.at("steps");
        const auto d = analysis::diff_snapshots(load_relative(pair.before), load_relative(pair.after),
                                                with_steps(steps[0], steps[1]));
        CHECK(d.totals.allocated.before == e.at("allocated_before"));
        CHECK(d.totals.allocated.after == e.at("allocated_after"));
        CHECK(d.totals.reserved.before == e.at("reserved_before"));
        CHECK(d.totals.reserved.after == e.at("reserved_after"));
        const std::string verdict = e.at("verdict");
        REQUIRE(!d.sites.empty());
        const auto& top = d.sites.front();
        if (verdict == "fragmentation" || verdict == "cache_growth") {
            CHECK(analysis::to_string(d.verdict) == verdict);
            for (const auto& s : d.sites) {
                CHECK(s.verdict != Verdict::leak);
                CHECK(s.delta_bytes == 0);
            }
            continue;
        }
        // Every pair emulates one process: shown by its trace, or not ruled out with the same sites.
        CHECK(d.comparability.same_process != Answer::no);
        CHECK(d.comparability.behaviour_allowed());
        CHECK(analysis::to_string(d.verdict) == verdict);
        // A site's verdict follows the pair's: growth without a stack stays a level.
        if (verdict == "shape_growth")
            CHECK(top.verdict == Verdict::shape_growth);
        else if (verdict == "growth")
            CHECK(top.verdict == Verdict::growth);
        else
            CHECK(top.verdict == Verdict::leak);
        if (e.contains("leak_site") && !e.at("leak_site").is_null()) {
            CHECK(top.site.filename == e.at("leak_site").at("filename"));
            CHECK(top.site.line == e.at("leak_site").at("line"));
            CHECK(top.site.name == e.at("leak_site").at("name"));
        }
        if (e.contains("pattern") && !e.at("pattern").is_null()) {
            const std::string pattern = e.at("pattern");
            if (pattern == "retained_graph")
                CHECK(d.overall.pattern == Pattern::retained_graph);
            else
                CHECK(top.diagnosis.pattern.has_value());
            if (top.diagnosis.pattern && pattern != "retained_graph")
                CHECK(analysis::to_string(*top.diagnosis.pattern) == pattern);
        }
        if (pair.dir == "retained_graph") {
            // Several forward sites share the growth: the sum over them is the leak.
            std::int64_t leak_bytes = 0;
            for (const auto& s : d.sites)
                if (s.verdict == Verdict::leak) leak_bytes += s.delta_bytes;
            CHECK(leak_bytes == e.at("leak_delta_bytes"));
            continue;
        }
        CHECK(top.delta_bytes == e.at("leak_delta_bytes"));
        CHECK(top.growth_bytes_per_step == doctest::Approx(e.at("leak_growth_bytes_per_step").get<double>()));
        if (pair.dir == "no_stacks") {
            CHECK_FALSE(d.stacks_recorded);
            CHECK(top.site.name.find(std::to_string(e.at("leak_block_size").get<std::int64_t>())) != std::string::npos);
        }
    }
}

namespace {}  // namespace

TEST_CASE("an injected leak in real captures ranks first / exact to the byte" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    int tested = 0;
    for (const auto& path : test::files_in(test::real_dir() / "snapshots", ".pickle")) {
        CAPTURE(path.string());
        const auto before = snapshot::load_snapshot(path.string());
        // The leak takes the stack of a real live block whose site is user code; noise frees
        // one block of another site and duplicates another.
        analysis::StackIndex index({&before}, {}, {});
        const auto site_of = [&](snapshot::StackId stack) {
            auto key = index.site(index.stack(0, stack));
            key.category = index.category(0, stack);  // sites are kept apart by category
            return key;
        };
        std::optional<std::size_t> leak_block;
        for (std::size_t i = 0; i < before.blocks.size(); ++i)
            if (before.blocks[i].live() && before.blocks[i].stack != snapshot::no_stack &&
                site_of(before.blocks[i].stack).user_code) {
                leak_block = i;
                break;
            }
        if (!leak_block) continue;  // captures without stacks cannot carry a site
        auto after = before;
        const auto leak_stack = before.blocks[*leak_block].stack;
        const auto leak_site = site_of(leak_stack);
        for (auto& b : after.blocks)  // noise: one live block of another site is freed
            if (b.live() && site_of(b.stack) != leak_site) {
                b.state = snapshot::BlockState::inactive;
                b.state_name = after.strings.intern("inactive");
                break;
            }
        const std::int64_t size = 3 * 1024 * 1024 + 512;
        const int count = 40;
        test::inject_blocks(after, leak_stack, size, count);
        const auto d = analysis::diff_snapshots(before, after, with_steps(100, 500));
        REQUIRE(!d.sites.empty());
        const auto& top = d.sites.front();
        CHECK(top.site == leak_site);
        CHECK(top.new_blocks == count);
        CHECK(top.delta_bytes == size * count);
        CHECK(top.growth_bytes_per_step == doctest::Approx(static_cast<double>(size * count) / 400.0));
        CHECK(sum_site_deltas(d) == d.totals.allocated.delta);
        // A leak where the pair is comparable; a capture mostly without stacks shows neither
        // one process nor its workload: growth, ranked by its size all the same.
        const auto expected = d.comparability.behaviour_allowed() ? Verdict::leak : Verdict::growth;
        CHECK(top.verdict == expected);
        CHECK(d.verdict == expected);
        if (expected == Verdict::growth) CHECK(test::stacked_share(before) < 0.5);
        ++tested;
    }
    CHECK(tested >= 3);
}

TEST_CASE("real pairs diff without error: fp32 vs bf16 / torch 2.0 history" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    const auto dir = test::real_dir() / "snapshots";
    const auto fp32 = snapshot::load_snapshot((dir / "silmont2000-a2_forward_fp32.pickle").string());
    const auto bf16 = snapshot::load_snapshot((dir / "silmont2000-a2_forward_bf16.pickle").string());
    const auto d = analysis::diff_snapshots(fp32, bf16, {});
    CHECK(d.totals.allocated.delta == 0);
    CHECK(d.totals.reserved.delta == 861929472 - 610271232);
    CHECK_FALSE(d.stacks_recorded);
    CHECK(sum_site_deltas(d) == 0);
    // Two runs whose live blocks predate recording while their traces hold stacks: the traces
    // share no event, the blocks have no stack to show the workload, so only levels.
    CHECK(d.comparability.same_process != Answer::yes);
    CHECK_FALSE(d.comparability.behaviour_allowed());
    CHECK_FALSE(analysis::is_behaviour(d.verdict));
    const auto has_note = [&](analysis::FactKind kind) {
        return std::any_of(d.notes.begin(), d.notes.end(), [&](const auto& f) { return f.kind == kind; });
    };
    CHECK(has_note(analysis::FactKind::not_comparable));
    CHECK(has_note(analysis::FactKind::stacks_before_recording));
    const auto history = snapshot::load_snapshot((dir / "yiyi-llm-inference_opt1.3b_torch2.0.pickle").string());
    const auto h = analysis::diff_snapshots(history, fp32, test::all_sites());
    CHECK(sum_site_deltas(h) == h.totals.allocated.delta);
    CHECK(!test::render(h).empty());
}

TEST_CASE("options: device / focus / hide / granularity" * doctest::test_suite("unit")) {
    const auto a = load_relative("fixtures/pairs/leak/run_step100.pickle");
    const auto b = load_relative("fixtures/pairs/leak/run_step500.pickle");
    auto focus = test::all_sites();
    focus.stacks.focus = {"metrics\\.py"};
    const auto focused = analysis::diff_snapshots(a, b, focus);
    for (const auto& s : focused.sites) CHECK(s.site.filename.find("metrics.py") != std::string::npos);
    auto hide = test::all_sites();
    hide.stacks.hide = {"train\\.py:57 "};
    const auto hidden = analysis::diff_snapshots(a, b, hide);
    // With its line hidden, the leak moves to the caller frame.
    CHECK(hidden.sites.front().site.line == 120);
    auto by_function = test::all_sites();
    by_function.stacks.function_granularity = true;
    const auto functions = analysis::diff_snapshots(a, b, by_function);
    for (const auto& s : functions.sites) {
        CHECK(s.site.line == 0);
        if (!s.site.filename.empty()) CHECK(s.site.label().find(":0") == std::string::npos);
    }
    // A device the captures do not hold is an input error naming the devices they have.
    auto other_device = test::all_sites();
    other_device.device = 7;
    try {
        (void)analysis::diff_snapshots(a, b, other_device);
        FAIL("--device 7 was accepted");
    } catch (const Error& e) {
        CHECK(e.kind() == ErrorKind::input);
        CHECK(std::string(e.what()).find("device 0 only") != std::string::npos);
    }
    auto bad = test::all_sites();
    bad.stacks.hide = {"(["};
    CHECK_THROWS_AS(analysis::diff_snapshots(a, b, bad), Error);
}

TEST_CASE("the growth gate trips on allocated or site growth per step" * doctest::test_suite("unit")) {
    const auto a = load_relative("fixtures/pairs/leak/run_step100.pickle");
    const auto b = load_relative("fixtures/pairs/leak/run_step500.pickle");
    const auto d = analysis::diff_snapshots(a, b, with_steps(100, 500));
    const auto tripped = test::gate(d, 1024 * 1024);
    REQUIRE(tripped.has_value());
    CHECK(tripped->find("allocated memory grows") != std::string::npos);
    CHECK_FALSE(test::gate(d, 10 * 1024 * 1024).has_value());
}

TEST_CASE("golden: diff text and json on the leak pair" * doctest::test_suite("unit")) {
    const auto a = load_relative("fixtures/pairs/leak/run_step100.pickle");
    const auto b = load_relative("fixtures/pairs/leak/run_step500.pickle");
    auto top10 = with_steps(100, 500);
    top10.top = 10;
    test::check_golden("diff/leak.txt", test::render(analysis::diff_snapshots(a, b, top10)));
    const auto d = analysis::diff_snapshots(a, b, with_steps(100, 500));
    test::check_golden("diff/leak.json", test::render(d, report::Format::json));
    auto unknown = test::all_sites();
    unknown.top = 10;
    unknown.stack_samples = analysis::StackSamples::changed;  // for the folded output below
    const auto g = analysis::diff_snapshots(load_relative("fixtures/pairs/retained_graph/step100.pickle"),
                                            load_relative("fixtures/pairs/retained_graph/step110.pickle"), unknown);
    test::check_golden("diff/retained_graph.txt", test::render(g));
    const auto f =
        analysis::diff_snapshots(load_relative("fixtures/pairs/fragmentation/step100.pickle"),
                                 load_relative("fixtures/pairs/fragmentation/step500.pickle"), with_steps(100, 500));
    test::check_golden("diff/fragmentation.json", test::render(f, report::Format::json));
    const auto folded = test::render(g, report::Format::folded);
    test::check_golden("diff/retained_graph.folded", folded);
    // Every line is "frames bytes", and the grown bytes add up to the growth of the sites.
    std::int64_t sum = 0;
    std::istringstream lines(folded);
    for (std::string line; std::getline(lines, line);) {
        const auto space = line.rfind(' ');
        REQUIRE(space != std::string::npos);
        sum += std::stoll(line.substr(space + 1));
    }
    std::int64_t grown = 0;
    for (const auto& stack : g.stack_samples) grown += std::max<std::int64_t>(stack.delta_bytes(), 0);
    CHECK(sum == grown);
    CHECK(g.sites_total <= 10 + g.sites_beyond_top);
}

TEST_CASE("CLI diff: formats / steps from names / --fail-on-growth exit 3" * doctest::test_suite("cli")) {
    const auto before = test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle");
    const auto after = test::quote(test::fixtures_dir() / "pairs" / "leak" / "run_step500.pickle");
    const auto json = test::run_memsnap("diff " + before + " " + after + " --format json");
    REQUIRE(json.exit_code == 0);
    const auto j = nlohmann::json::parse(json.out);
    CHECK(j.at("kind") == "snapshot_diff");
    CHECK(j.at("schema_version") == 2);
    CHECK(j.at("steps") == nlohmann::json::array({100, 500}));
    CHECK(j.at("verdict") == "leak");
    for (const char* key : {"allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes", "inactive_bytes"})
        for (const char* part : {"before", "after", "delta", "per_step"}) CHECK(j.at("totals").at(key).contains(part));
    const auto& site = j.at("sites").at(0);
    for (const char* key : {"rank", "frame", "before_bytes", "after_bytes", "delta_bytes", "before_blocks",
                            "after_blocks", "delta_blocks", "new_blocks", "gone_blocks", "growth_bytes_per_step",
                            "share", "verdict", "diagnosis", "stacks"})
        CHECK(site.contains(key));
    CHECK(site.at("growth_bytes_per_step") == 2097152);
    // Listed deltas and the sites left out add up to the live-block change, --top or not.
    const auto sum_of = [](const nlohmann::json& doc) {
        std::int64_t sum = doc.at("sites_not_listed").at("delta_bytes").get<std::int64_t>();
        for (const auto& s : doc.at("sites")) sum += s.at("delta_bytes").get<std::int64_t>();
        return sum;
    };
    const auto top1 =
        nlohmann::json::parse(test::run_memsnap("diff " + before + " " + after + " --format json --top 1").out);
    CHECK(top1.at("sites").size() == 1);
    CHECK(top1.at("sites_not_listed").at("beyond_top") == j.at("sites_total").get<std::size_t>() - 1);
    CHECK(j.at("sites_not_listed").at("delta_bytes") == 0);
    CHECK(sum_of(top1) == sum_of(j));
    CHECK(sum_of(j) == j.at("totals").at("allocated_bytes").at("delta").get<std::int64_t>());
    for (const char* format : {"text", "markdown", "csv"})
        CHECK(test::run_memsnap("diff " + before + " " + after + " --format " + format).exit_code == 0);
    const auto gate = test::run_memsnap("diff " + before + " " + after + " --fail-on-growth 1MiB");
    CHECK(gate.exit_code == 3);
    CHECK(gate.err.find("allocated memory grows") != std::string::npos);
    CHECK(test::run_memsnap("diff " + before + " " + after + " --fail-on-growth 10MiB").exit_code == 0);
    CHECK(test::run_memsnap("diff " + before + " " + after + " --fail-on-growth 10furlongs").exit_code == 1);
    CHECK(test::run_memsnap("diff " + before + " " + after + " --steps 5,5").exit_code == 1);
    const auto unknown = test::run_memsnap(
        "diff " + test::quote(test::fixtures_dir() / "snapshots" / "gen_torch2.1_frames.pickle") + " " +
        test::quote(test::fixtures_dir() / "snapshots" / "gen_torch2.1_frames.pickle") + " --format json");
    CHECK(nlohmann::json::parse(unknown.out).at("steps").is_null());
    const auto colour = test::run_memsnap("diff " + before + " " + after + " --color always", "NO_COLOR=1");
    CHECK(colour.out.find("\x1b[") == std::string::npos);
    const auto forced = test::run_memsnap("diff " + before + " " + after + " --color always");
    CHECK(forced.out.find("\x1b[") != std::string::npos);
    const auto piped = test::run_memsnap("diff " + before + " " + after);
    CHECK(piped.out.find("\x1b[") == std::string::npos);
    const auto folded = test::run_memsnap("diff " + before + " " + after + " --format folded");
    CHECK(folded.exit_code == 0);
    CHECK(folded.out.find("train_step (/home/user/project/train.py:57) 838860800\n") != std::string::npos);
    const auto summaries = test::fixtures_dir() / "summaries";
    CHECK(test::run_memsnap("diff --format folded " + test::quote(summaries / "pair_leak_before.txt") + " " +
                            test::quote(summaries / "pair_leak_after.txt"))
              .exit_code == 1);
}

TEST_CASE("info and diff name sites alike on every generated pair" * doctest::test_suite("unit")) {
    for (const auto& pair : fixture_pairs()) {
        CAPTURE(pair.dir);
        const auto before = load_relative(pair.before);
        const auto after = load_relative(pair.after);
        const auto info = test::describe(before, test::all_sites());
        const auto d = analysis::diff_snapshots(before, after, test::all_sites());
        std::map<analysis::SiteKey, const analysis::SiteChange*> by_site;
        for (const auto& s : d.sites) by_site[s.site] = &s;
        for (const auto& usage : info.top_sites) {
            CAPTURE(usage.site.label());
            const auto it = by_site.find(usage.site);
            REQUIRE(it != by_site.end());
            CHECK(it->second->before_bytes == usage.bytes);
            CHECK(it->second->before_blocks == usage.blocks);
            CHECK(it->second->category == usage.category);
        }
    }
}
