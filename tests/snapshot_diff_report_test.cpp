// The markdown and CSV writers of the snapshot diff: a hand-built SnapshotDiff (so the output
// does not depend on the analysis) and, once the analysis exists, the real leak fixture pair.
#include "analysis_support.hpp"
#include "support.hpp"

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/snapshot/load.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>

using namespace memsnap;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + needle.size())) ++n;
    return n;
}

std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

constexpr std::int64_t MiB = 1024 * 1024;

// Three sites: a leak with a diagnosis and a stack, a site whose name holds `|`, `,` and a
// quote (a lambda in a notebook), and a site whose blocks were freed.
// A stack whose frames go into the diff's frame table, as the analysis writes them.
analysis::RepresentativeStack stack_of(analysis::SnapshotDiff& d, std::int64_t size, std::int64_t blocks,
                                       analysis::Category category, const std::vector<analysis::FrameText>& frames) {
    analysis::RepresentativeStack s{size, blocks, blocks * size, category, {}, 0};
    for (const auto& f : frames) {
        s.frames.push_back(static_cast<std::uint32_t>(d.frame_table.size()));
        d.frame_table.push_back(f);
    }
    return s;
}

analysis::SnapshotDiff hand_built() {
    analysis::SnapshotDiff d;
    d.before_file = "runs/step100.pickle";
    d.after_file = "runs/step500.pickle";
    d.steps = {std::pair<std::int64_t, std::int64_t>{100, 500}, "file names", ""};
    d.devices = {{0}, {0}};
    d.comparability.same_process = analysis::Answer::yes;
    d.comparability.process_evidence = {analysis::Fact(analysis::FactKind::traces_share_events).count("events", 412)};
    d.comparability.same_workload = analysis::Answer::yes;
    d.comparability.workload_evidence = {
        analysis::Fact(analysis::FactKind::same_sites).count("sites", 3).real("share", 1.0)};
    d.totals.allocated = {8000 * MiB, 8400 * MiB, 400 * MiB, 1.0 * MiB};
    d.totals.active = {8000 * MiB, 8400 * MiB, 400 * MiB, 1.0 * MiB};
    d.totals.reserved = {9000 * MiB, 9600 * MiB, 600 * MiB, 1.5 * MiB};
    d.totals.inactive_split = {100 * MiB, 100 * MiB, 0, 0};
    d.pending_free_before = 0;
    d.pending_free_after = 2 * MiB;
    d.verdict = analysis::Verdict::leak;
    const auto metric = [](const char* name, std::int64_t before, std::int64_t delta, std::int64_t threshold) {
        return analysis::Fact(analysis::FactKind::metric_change)
            .text("metric", name)
            .range("before", ByteRange::exact(before), true)
            .range("delta", ByteRange::exact(delta), true)
            .bytes("threshold", threshold)
            .text("change", "grows")
            .flag("uncertain", false);
    };
    d.evidence = {metric("allocated", 8000 * MiB, 400 * MiB, 42 * MiB),
                  metric("reserved", 9000 * MiB, 600 * MiB, 48 * MiB)};
    d.advice = {analysis::Advice::leak_kept, analysis::Advice::leak_references};
    d.categories[static_cast<std::size_t>(analysis::Category::activation)] = {100 * MiB, 500 * MiB, 100, 500};
    d.live_blocks_before = 1000;
    d.live_blocks_after = 1396;
    d.survivors = 990;
    d.new_blocks = 406;
    d.gone_blocks = 10;
    d.convergence = analysis::Convergence{{"train.py", 42, "train_step", true}, 400 * MiB, 0, 1.0, 2};
    d.overall.pattern = analysis::Pattern::retained_graph;
    d.overall.evidence = {analysis::Fact(analysis::FactKind::forward_sites_alike)
                              .count("sites", 2)
                              .count("blocks_each", 1)
                              .count("blocks", 400)
                              .bytes("bytes", 400 * MiB)};
    d.notes = {analysis::Fact(analysis::FactKind::pending_free).bytes("before", 0).bytes("after", 2 * MiB)};

    analysis::SiteChange leak;
    leak.rank = 1;
    leak.site = {"model.py", "forward", 17, true, false};
    leak.category = analysis::Category::activation;
    leak.before_bytes = 100 * MiB;
    leak.after_bytes = 400 * MiB;
    leak.delta_bytes = 300 * MiB;
    leak.before_blocks = 100;
    leak.after_blocks = 400;
    leak.delta_blocks = 300;
    leak.new_blocks = 305;
    leak.gone_blocks = 5;
    leak.survivor_blocks = 95;
    leak.growth_bytes_per_step = 300.0 * MiB / 400;
    leak.share = 0.75;
    leak.verdict = analysis::Verdict::leak;
    leak.diagnosis.pattern = analysis::Pattern::retained_graph_site;
    leak.diagnosis.evidence = {analysis::Fact(analysis::FactKind::blocks_per_step).real("rate", 0.75)};
    leak.stacks = {stack_of(d, MiB, 300, analysis::Category::activation,
                            {{"torch/nn/functional.py", 2000, "linear", true},
                             {"??", 0, "at::native::addmm", false},
                             {"model.py", 17, "forward", true},
                             {"train.py", 42, "train_step", true}})};

    analysis::SiteChange odd;
    odd.rank = 2;
    odd.site = {"<ipython-input-3>", "<lambda> | a, \"b\"", 5, true, false};
    odd.before_bytes = 0;
    odd.after_bytes = 100 * MiB;
    odd.delta_bytes = 100 * MiB;
    odd.after_blocks = 100;
    odd.delta_blocks = 100;
    odd.new_blocks = 100;
    odd.growth_bytes_per_step = 100.0 * MiB / 400;
    odd.share = 0.25;
    odd.verdict = analysis::Verdict::shape_growth;
    odd.stacks = {
        stack_of(d, MiB, 100, analysis::Category::unknown, {{"<ipython-input-3>", 5, "<lambda> | a, \"b\"", true}})};

    analysis::SiteChange freed;
    freed.rank = 3;
    freed.site = {"", std::string(analysis::no_stack_site), 0, false, false};
    freed.before_bytes = 4 * MiB;
    freed.after_bytes = 0;
    freed.delta_bytes = -4 * MiB;
    freed.before_blocks = 10;
    freed.delta_blocks = -10;
    freed.gone_blocks = 10;
    freed.growth_bytes_per_step = -4.0 * MiB / 400;
    freed.share = 0;
    freed.verdict = analysis::Verdict::freed;
    freed.has_stack = false;

    d.sites = {leak, odd, freed};
    d.sites_total = 3;
    return d;
}

}  // namespace

TEST_CASE("snapshot diff report: markdown golden / hand-built diff" * doctest::test_suite("unit")) {
    const auto d = hand_built();
    const auto md = test::render(d, report::Format::markdown);
    test::check_golden("diff/hand_built.md", md);

    CHECK(md.starts_with("## memsnap diff runs/step100.pickle → runs/step500.pickle\n"));
    CHECK(count(md, "<details>") == 3);
    CHECK(count(md, "</details>") == 3);
    CHECK(md.find("### Verdict: **LEAK**") != std::string::npos);
    // `|` is escaped in table cells; `<no stack>` is escaped inside the HTML summary.
    CHECK(md.find("| `<ipython-input-3>:5 <lambda> \\| a, \"b\"` |") != std::string::npos);
    CHECK(md.find("<summary>3 — -10.24 KiB/step — freed — &lt;no stack&gt;") != std::string::npos);
    CHECK(md.find("not shown (") == std::string::npos);
    // Python frames first; the C++ frame collapses to a count unless asked for.
    CHECK(md.find("at::native::addmm") == std::string::npos);
    CHECK(md.find("(1 C++ frame not shown: --cpp-frames shows them)") != std::string::npos);
    report::RenderOptions cpp;
    cpp.cpp_frames = true;
    CHECK(test::render(d, report::Format::markdown, cpp).find("?? at::native::addmm") != std::string::npos);
    // Each table row has the same number of unescaped cell separators as its header.
    for (const auto& line : lines(md)) {
        if (!line.starts_with("| ")) continue;
        std::size_t bars = 0;
        for (std::size_t i = 0; i < line.size(); ++i)
            if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
        CAPTURE(line);
        CHECK((bars == 5 || bars == 6));
    }
    // Deterministic.
    CHECK(test::render(d, report::Format::markdown) == md);
}

TEST_CASE("snapshot diff report: csv golden / hand-built diff" * doctest::test_suite("unit")) {
    const auto d = hand_built();
    const auto csv = test::render(d, report::Format::csv);
    test::check_golden("diff/hand_built.csv", csv);

    const auto rows = lines(csv);
    REQUIRE(rows.size() == 4);
    CHECK(rows[0] ==
          "rank,growth_bytes_per_step,verdict,filename,line,name,user_code,compiled_graph,has_stack,category,before_"
          "bytes,"
          "after_bytes,delta_bytes,before_blocks,after_blocks,delta_blocks,new_blocks,gone_blocks,survivor_blocks,"
          "share,pattern,summary,fix,stacks_not_shown,stacks_not_shown_blocks,stacks_not_shown_bytes");
    CHECK(rows[1] ==
          "1,786432.000,leak,model.py,17,forward,true,false,true,activation,104857600,419430400,314572800,100,400,300,"
          "305,"
          "5,95,0.750000,retained_graph_site,likely part of a retained autograd graph (see the overall diagnosis): "
          "saved activations of a forward pass that is never freed,\"keep Python numbers or detached copies: "
          "`loss.item()`, `out.detach().cpu()`; wrap evaluation in `with torch.no_grad():`\",0,0,0");
    CHECK(rows[2].find(",\"<lambda> | a, \"\"b\"\"\",") != std::string::npos);
    CHECK(rows[3].starts_with("3,-10485.760,freed,,0,<no stack>,"));
    CHECK(rows[3].find(",0.000000,") != std::string::npos);
}

TEST_CASE("snapshot diff report: sites left out by --top and --min-growth are counted" * doctest::test_suite("unit")) {
    auto d = hand_built();
    d.sites.resize(1);
    d.sites_beyond_top = 1;
    d.sites_below_min_growth = 1;
    const auto md = test::render(d, report::Format::markdown);
    CHECK(count(md, "<details>") == 1);
    CHECK(md.find("(1 of 3 sites, 1 beyond --top (--top 0 lists all), 1 below --min-growth)") != std::string::npos);
    CHECK(lines(test::render(d, report::Format::csv)).size() == 2);
    const auto text = test::render(d);
    CHECK(text.find("(1 of 3 sites, 1 beyond --top (--top 0 lists all), 1 below --min-growth)") != std::string::npos);
    d.sites.clear();
    CHECK(test::render(d, report::Format::markdown).find("No site passes the filters.") != std::string::npos);
}

TEST_CASE("snapshot diff report: steps unknown / and shares within the noise floor" * doctest::test_suite("unit")) {
    auto d = hand_built();
    d.steps = {};
    d.notes = {analysis::Fact(analysis::FactKind::steps_unknown).text("source", "no --steps, no step words")};
    for (auto& s : d.sites) s.share.reset();
    const auto md = test::render(d, report::Format::markdown);
    // The sentence comes from the analysis once; writers print the field "unknown".
    CHECK(count(md, "steps unknown (no --steps, no step words): growth is given per capture") == 1);
    CHECK(md.find("- **steps**: unknown") != std::string::npos);
    CHECK(md.find("/step ") == std::string::npos);
    // A rate per capture of two captures is their change: people see the change once.
    CHECK(md.find("| total | before | after | delta |\n") != std::string::npos);
    CHECK(md.find("/capture") == std::string::npos);
    const auto text = test::render(d);
    CHECK(count(text, "steps unknown") == 1);
    CHECK(text.find("75.0% of the growth") == std::string::npos);  // no share per site
    CHECK(test::render(d, report::Format::csv).find(",,retained_graph_site,") != std::string::npos);
    const auto json = nlohmann::json::parse(test::render(d, report::Format::json));
    CHECK(json.at("sites").at(0).at("share").is_null());
}

TEST_CASE("snapshot diff report: golden on the leak fixture pair" * doctest::test_suite("unit")) {
    const auto dir = test::fixtures_dir() / "pairs" / "leak";
    const auto before = snapshot::load_snapshot((dir / "run_step100.pickle").string());
    const auto after = snapshot::load_snapshot((dir / "run_step500.pickle").string());
    auto options = test::all_sites();
    options.top = 10;
    auto d = analysis::diff_snapshots(before, after, options);
    d.before_file = "fixtures/pairs/leak/run_step100.pickle";
    d.after_file = "fixtures/pairs/leak/run_step500.pickle";

    const auto md = test::render(d, report::Format::markdown);
    test::check_golden("diff/leak.md", md);
    const auto csv = test::render(d, report::Format::csv);
    test::check_golden("diff/leak.csv", csv);

    CHECK(count(md, "<details>") == d.sites.size());
    CHECK(lines(csv).size() == d.sites.size() + 1);
}

TEST_CASE("snapshot diff report: a peak counting allocations the snapshot does not hold says so" *
          doctest::test_suite("unit")) {
    auto d = hand_built();
    analysis::Peak held;  // every allocation its trace leaves live is a block of the snapshot
    held.bytes = 300 * MiB;
    held.event = 40;
    held.usage.category_bytes[static_cast<std::size_t>(analysis::Category::activation)] = 300 * MiB;
    analysis::Peak lacking = held;  // frees missing from the trace: the sites add up to more
    lacking.usage.category_bytes[static_cast<std::size_t>(analysis::Category::activation)] = 900 * MiB;
    lacking.not_in_snapshot = 12;
    lacking.not_in_snapshot_bytes = 600 * MiB;
    d.peak_before = held;
    d.peak_after = lacking;
    const auto text = test::render(d);
    CHECK(count(text, "trace vs snapshot") == 1);
    CHECK(text.find("the allocations below add up to 900.00 MiB, 600.00 MiB more than this peak: the trace does not "
                    "match its snapshot, and 12 of them (600.00 MiB): never freed in the trace, not blocks of the "
                    "snapshot (their frees are missing: recording stopped and resumed?); they are what the trace "
                    "shows, not what was live") != std::string::npos);
    const auto json = nlohmann::json::parse(test::render(d, report::Format::json));
    CHECK(json.at("peaks").at("before").at("not_in_snapshot") == 0);
    CHECK(json.at("peaks").at("before").at("not_in_snapshot_bytes") == 0);
    CHECK(json.at("peaks").at("after").at("not_in_snapshot") == 12);
    CHECK(json.at("peaks").at("after").at("not_in_snapshot_bytes") == 600 * MiB);
    CHECK_FALSE(json.at("peaks").at("after").contains("not_in_snapshot_text"));
    // Sites that add up to the peak: only the allocations never freed are said.
    lacking.usage.category_bytes[static_cast<std::size_t>(analysis::Category::activation)] = 300 * MiB;
    d.peak_after = lacking;
    const auto within = test::render(d);
    CHECK(within.find("12 of the allocations below (600.00 MiB): never freed in the trace, not blocks of the snapshot "
                      "(their frees are missing: recording stopped and resumed?), so some may have been freed before "
                      "this peak\n") != std::string::npos);
    CHECK(within.find("add up to") == std::string::npos);
    // Blocks made before the trace, freed in it, more than the snapshot could have held: sites
    // that add up to more, and nothing never freed.
    held.usage.category_bytes[static_cast<std::size_t>(analysis::Category::gradient)] = 100 * MiB;
    d.peak_before = held;
    d.peak_after.reset();
    const auto freed_more = test::render(d);
    CHECK(freed_more.find("the allocations below add up to 400.00 MiB, 100.00 MiB more than this peak: the trace does "
                          "not match its snapshot; they are what the trace shows, not what was live") !=
          std::string::npos);
    CHECK(nlohmann::json::parse(test::render(d, report::Format::json)).at("peaks").at("after").is_null());
}
