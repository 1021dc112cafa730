// The markdown and CSV writers of the snapshot diff: a hand-built SnapshotDiff (so the output
// does not depend on the analysis) and, once the analysis exists, the real leak fixture pair.
#include "support.hpp"

#include <memsnap/analysis/snapshot_diff.hpp>
#include <memsnap/report/snapshot_diff.hpp>
#include <memsnap/snapshot/load.hpp>

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
analysis::SnapshotDiff hand_built() {
    analysis::SnapshotDiff d;
    d.before_file = "runs/step100.pickle";
    d.after_file = "runs/step500.pickle";
    d.steps = std::pair<std::int64_t, std::int64_t>{100, 500};
    d.steps_source = "file names";
    d.totals = {
        {"allocated", {8000 * MiB, 8400 * MiB, 400 * MiB, 1.0 * MiB}},
        {"active", {8000 * MiB, 8400 * MiB, 400 * MiB, 1.0 * MiB}},
        {"reserved", {9000 * MiB, 9600 * MiB, 600 * MiB, 1.5 * MiB}},
        {"inactive_split", {100 * MiB, 100 * MiB, 0, 0}},
    };
    d.pending_free_before = 0;
    d.pending_free_after = 2 * MiB;
    d.verdict.verdict = analysis::Verdict::leak;
    d.verdict.evidence = {"allocated grew by 400.00 MiB (threshold 40.00 MiB)",
                          "reserved grew by 600.00 MiB (threshold 45.00 MiB)"};
    d.verdict.advice = {"Find what keeps tensors alive between steps: the sites below."};
    d.live_blocks_before = 1000;
    d.live_blocks_after = 1396;
    d.survivors = 990;
    d.new_blocks = 406;
    d.gone_blocks = 10;
    d.convergence = analysis::Convergence{{"train.py", 42, "train_step"}, 400 * MiB, 0, 1.0, 2};
    d.overall.pattern = "retained_graph";
    d.overall.summary = "likely one autograd graph kept per step (e.g. losses.append(loss))";
    d.overall.fix = "append loss.item(), or loss.detach().cpu() for non-scalars";
    d.overall.evidence = {"2 forward sites grow by 1 block per step each"};
    d.notes = {"pending frees are counted apart from allocated memory"};

    analysis::SiteChange leak;
    leak.rank = 1;
    leak.site = {"model.py", "forward", 17, true};
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
    leak.verdict = analysis::SiteVerdict::leak;
    leak.diagnosis = {"retained_graph", "likely activations kept across steps", "call .detach() before storing",
                      {"+1 block per step, same size each time"}};
    leak.stacks = {{MiB, 300, 300 * MiB,
                    {{"torch/nn/functional.py", 2000, "linear"},
                     {"model.py", 17, "forward"},
                     {"train.py", 42, "train_step"}}}};

    analysis::SiteChange odd;
    odd.rank = 2;
    odd.site = {"<ipython-input-3>", "<lambda> | a, \"b\"", 5, true};
    odd.before_bytes = 0;
    odd.after_bytes = 100 * MiB;
    odd.delta_bytes = 100 * MiB;
    odd.after_blocks = 100;
    odd.delta_blocks = 100;
    odd.new_blocks = 100;
    odd.growth_bytes_per_step = 100.0 * MiB / 400;
    odd.share = 0.25;
    odd.verdict = analysis::SiteVerdict::shape_growth;
    odd.stacks = {{MiB, 100, 100 * MiB, {{"<ipython-input-3>", 5, "<lambda> | a, \"b\""}}}};

    analysis::SiteChange freed;
    freed.rank = 3;
    freed.site = {"", analysis::no_stack_site, 0, false};
    freed.before_bytes = 4 * MiB;
    freed.after_bytes = 0;
    freed.delta_bytes = -4 * MiB;
    freed.before_blocks = 10;
    freed.delta_blocks = -10;
    freed.gone_blocks = 10;
    freed.growth_bytes_per_step = -4.0 * MiB / 400;
    freed.share = 0;
    freed.verdict = analysis::SiteVerdict::freed;

    d.sites = {leak, odd, freed};
    return d;
}

}  // namespace

TEST_CASE("snapshot diff report: markdown golden, hand-built diff") {
    const auto d = hand_built();
    const auto md = report::render_snapshot_diff_markdown(d, {});
    test::check_golden("diff/hand_built.md", md);

    CHECK(md.starts_with("## memsnap diff: runs/step100.pickle → runs/step500.pickle\n"));
    CHECK(count(md, "<details>") == 3);
    CHECK(count(md, "</details>") == 3);
    CHECK(md.find("**Allocator verdict: leak**") != std::string::npos);
    // `|` is escaped in table cells; `<no stack>` is escaped inside the HTML summary.
    CHECK(md.find("| `<ipython-input-3>:5 <lambda> \\| a, \"b\"` |") != std::string::npos);
    CHECK(md.find("#3 &lt;no stack&gt;") != std::string::npos);
    CHECK(md.find("not shown") == std::string::npos);
    // Each table row has the same number of unescaped cell separators as its header.
    for (const auto& line : lines(md)) {
        if (!line.starts_with("| ")) continue;
        std::size_t bars = 0;
        for (std::size_t i = 0; i < line.size(); ++i)
            if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++bars;
        CAPTURE(line);
        CHECK((bars == 6 || bars == 10));
    }
    // Deterministic.
    CHECK(report::render_snapshot_diff_markdown(d, {}) == md);
}

TEST_CASE("snapshot diff report: csv golden, hand-built diff") {
    const auto d = hand_built();
    const auto csv = report::render_snapshot_diff_csv(d, {});
    test::check_golden("diff/hand_built.csv", csv);

    const auto rows = lines(csv);
    REQUIRE(rows.size() == 4);
    CHECK(rows[0] ==
          "rank,filename,line,name,verdict,before_bytes,after_bytes,delta_bytes,before_blocks,after_blocks,"
          "delta_blocks,new_blocks,gone_blocks,growth_bytes_per_step,share,pattern");
    CHECK(rows[1] == "1,model.py,17,forward,leak,104857600,419430400,314572800,100,400,300,305,5,786432.000,"
                     "0.750000,retained_graph");
    CHECK(rows[2].find(",\"<lambda> | a, \"\"b\"\"\",") != std::string::npos);
    CHECK(rows[3].starts_with("3,,0,<no stack>,freed,"));
    CHECK(rows[3].find(",-10485.760,0.000000,") != std::string::npos);
}

TEST_CASE("snapshot diff report: top and min_growth cut the list and say so") {
    const auto d = hand_built();
    report::DiffRenderOptions top1;
    top1.top = 1;
    const auto md = report::render_snapshot_diff_markdown(d, top1);
    CHECK(count(md, "<details>") == 1);
    CHECK(md.find("2 more sites not shown (2 beyond the top 1).") != std::string::npos);
    CHECK(md.find("| 2 |") == std::string::npos);
    CHECK(lines(report::render_snapshot_diff_csv(d, top1)).size() == 2);

    report::DiffRenderOptions all;
    all.top = 0;
    CHECK(count(report::render_snapshot_diff_markdown(d, all), "<details>") == 3);

    report::DiffRenderOptions big;
    big.top = 0;
    big.min_growth = 50 * MiB;  // the freed site (-4 MiB) goes, the other two stay
    const auto md_big = report::render_snapshot_diff_markdown(d, big);
    CHECK(count(md_big, "<details>") == 2);
    CHECK(md_big.find("1 more site not shown (1 changed by less than 50.00 MiB).") != std::string::npos);
    const auto csv_big = lines(report::render_snapshot_diff_csv(d, big));
    REQUIRE(csv_big.size() == 3);
    CHECK(csv_big[2].starts_with("2,"));

    report::DiffRenderOptions none;
    none.min_growth = 1024 * MiB;
    CHECK(lines(report::render_snapshot_diff_csv(d, none)).size() == 1);
    CHECK(report::render_snapshot_diff_markdown(d, none).find("No site passes the filters.") != std::string::npos);
}

TEST_CASE("snapshot diff report: steps unknown") {
    auto d = hand_built();
    d.steps.reset();
    d.steps_source = "unknown";
    const auto md = report::render_snapshot_diff_markdown(d, {});
    CHECK(md.find("steps unknown: growth is per capture") != std::string::npos);
    CHECK(md.find("/step</summary>") == std::string::npos);
    CHECK(md.find("| growth/capture |") != std::string::npos);
    CHECK(md.find("| metric | before | after | delta | per capture |") != std::string::npos);
    CHECK(md.find("/capture</summary>") != std::string::npos);
}

TEST_CASE("snapshot diff report: golden on the leak fixture pair") {
    const auto dir = test::fixtures_dir() / "pairs" / "leak";
    const auto before = snapshot::load_snapshot((dir / "run_step100.pickle").string());
    const auto after = snapshot::load_snapshot((dir / "run_step500.pickle").string());
    auto d = analysis::diff_snapshots(before, after, {});
    d.before_file = "fixtures/pairs/leak/run_step100.pickle";
    d.after_file = "fixtures/pairs/leak/run_step500.pickle";

    const auto md = report::render_snapshot_diff_markdown(d, {});
    test::check_golden("diff/leak.md", md);
    const auto csv = report::render_snapshot_diff_csv(d, {});
    test::check_golden("diff/leak.csv", csv);

    const std::size_t listed = std::min<std::size_t>(d.sites.size(), 10);
    CHECK(count(md, "<details>") == listed);
    CHECK(lines(csv).size() == listed + 1);
}
