// The consistency audit: every rule checked against every real capture and every ordered pair
// of them at once, and against variants built from them (a re-run in another checkout, a leak
// injected in one process, another device). A new rule that contradicts another on some
// real shape fails here, whichever case motivated it.
//
// For every pair: no behaviour verdict without its preconditions; the overall and the site
// verdicts agree; categories add up to allocated; site deltas add up to the allocated delta;
// every printed frame is a frame of its side's capture; filters change neither comparability
// nor the totals; stable and shrink carry no advice beyond saying so; every format renders.

#include "analysis_support.hpp"
#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/snapshot_info.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>

using namespace memsnap;
using analysis::Advice;
using analysis::Verdict;

namespace {

struct Capture {
    std::string name;
    snapshot::Snapshot snap;
};

std::vector<Capture> real_captures() {
    std::vector<Capture> out;
    for (const auto& ext : {".pickle", ".pkl"})
        for (const auto& f : test::files_in(test::real_dir() / "snapshots", ext))
            out.push_back({f.filename().string(), snapshot::load_snapshot(f.string())});
    return out;
}

using test::user_stack;

// Variants of each capture: a re-run in another checkout, the same process with a leak, the
// capture moved to device 1.
std::vector<Capture> variants_of(const std::vector<Capture>& captures) {
    std::vector<Capture> out;
    for (const auto& c : captures) {
        const auto root = analysis::StackIndex({&c.snap}, {}, {}).project_root(0);
        out.push_back({c.name + " (re-run)",
                       test::make_variant(c.snap, {test::rerun_paths(root), 0x100000000000, 3'600'000'000, {}})});
        if (const auto stack = user_stack(c.snap)) {
            auto leak = c.snap;
            test::inject_blocks(leak, *stack, 3 * 1024 * 1024 + 512, 40);
            out.push_back({c.name + " (leak)", std::move(leak)});
        }
        if (c.snap.segments.size() < 64)
            out.push_back({c.name + " (device 1)", test::make_variant(c.snap, {nullptr, 0, 0, 1})});
    }
    return out;
}

// Every (file, line, name) a capture's frames hold.
std::set<std::tuple<std::string, std::int64_t, std::string>> frames_of(const snapshot::Snapshot& snap) {
    std::set<std::tuple<std::string, std::int64_t, std::string>> out;
    for (std::size_t i = 0; i < snap.frames.size(); ++i) {
        const auto& f = snap.frames[snapshot::FrameId(static_cast<std::uint32_t>(i))];
        out.emplace(std::string(snap.str(f.filename)), f.line, std::string(snap.str(f.name)));
    }
    return out;
}

bool has(const std::vector<Advice>& list, Advice a) { return std::find(list.begin(), list.end(), a) != list.end(); }

void check_preconditions(const analysis::SnapshotDiff& d) {
    const auto& c = d.comparability;
    if (c.behaviour_allowed()) return;
    CHECK_FALSE(analysis::is_behaviour(d.verdict));
    CHECK(d.overall.empty());
    for (const auto& s : d.sites) {
        CAPTURE(s.site.label());
        CHECK_FALSE(analysis::is_behaviour(s.verdict));
        CHECK(s.diagnosis.empty());
    }
    for (const auto a : {Advice::leak_kept, Advice::leak_references, Advice::leak_detach, Advice::fragmentation_fix,
                         Advice::compare_after_warmup})
        CHECK_FALSE(has(d.advice, a));
    if (c.same_process == analysis::Answer::no) CHECK_FALSE(has(d.advice, Advice::cache_fix));
}

void check_agreement(const analysis::SnapshotDiff& d) {
    bool leak_site = false, one_time_site = false;
    for (const auto& s : d.sites) {
        leak_site |= s.verdict == Verdict::leak;
        one_time_site |= s.verdict == Verdict::one_time_growth;
        // A cause is named only for a site with a stack, under a behaviour verdict of its own.
        if (!s.diagnosis.empty()) {
            CHECK(s.has_stack);
            const bool judged = analysis::is_behaviour(s.verdict) || s.verdict == Verdict::shape_growth;
            CHECK(judged);
        }
        if (!s.has_stack) CHECK(s.diagnosis.empty());
    }
    if (leak_site) CHECK(d.verdict == Verdict::leak);
    if (d.verdict == Verdict::leak) CHECK(leak_site);
    if (one_time_site) CHECK(d.comparability.behaviour_allowed());
    if (d.verdict == Verdict::stable || d.verdict == Verdict::shrink) {
        for (const auto a : d.advice)
            CHECK((a == Advice::stable_nothing || a == Advice::shrink_nothing || a == Advice::shrink_levels ||
                   a == Advice::ooms_without_growth || a == Advice::retries_near_limit) == true);
        CHECK(d.overall.empty());
        CHECK_FALSE(d.convergence.has_value());
    }
    // Shrink and stable: neither allocated nor reserved grows past its floor (a cache that grew
    // as live memory fell is cache growth). Non-releasable cache may grow: the memory that live
    // blocks gave up, or free segments split, within what is reserved.
    if (d.verdict == Verdict::shrink || d.verdict == Verdict::stable) {
        for (const auto* m : {&d.totals.allocated, &d.totals.reserved})
            CHECK(m->delta <= analysis::noise_threshold(m->before, m->after));
        const auto& n = d.totals.non_releasable;
        // Said beside the verdict, though: its evidence shows the non-releasable cache grow.
        if (n.delta > analysis::noise_threshold(n.before, n.after))
            CHECK(std::any_of(d.evidence.begin(), d.evidence.end(), [](const analysis::Fact& f) {
                return f.kind == analysis::FactKind::metric_change && f.word("change") == "grows";
            }));
    }
    // Allocator advice ("not a leak: cache for reuse", "empty_cache") only where one run is judged.
    if (!d.comparability.behaviour_allowed())
        for (const auto a : d.advice) CHECK((a != Advice::cache_not_leak && a != Advice::cache_fix) == true);
    // A snapshot diff's advice never speaks of summary tables, stacks or not.
    for (const auto a : {Advice::growth_summaries, Advice::caveat_one_log}) CHECK_FALSE(has(d.advice, a));
    // "Live memory is the same within its noise floor" only when allocated memory is; "less
    // memory is live" only when it fell past the floor.
    const auto& live = d.totals.allocated;
    const auto floor = analysis::noise_threshold(live.before, live.after);
    if (has(d.advice, Advice::cache_levels)) CHECK(std::abs(live.delta) <= floor);
    if (has(d.advice, Advice::cache_levels_live_lower)) CHECK(live.delta < -floor);
}

// A trend's advice agrees with its totals: "flat" only when every total is, and "live memory is
// the same" only when allocated memory is.
void check_trend_advice(const analysis::TrendResult& t) {
    const auto verdict_of = [&](std::string_view name) {
        for (const auto& s : t.totals)
            if (s.name == name) return std::optional(s.fit.verdict);
        return std::optional<Verdict>();
    };
    const auto allocated = verdict_of("allocated_bytes");
    const auto reserved = verdict_of("reserved_bytes");
    if (has(t.advice, Advice::stable_nothing)) {
        CHECK((!allocated || *allocated == Verdict::stable));
        CHECK((!reserved || *reserved == Verdict::stable));
    }
    if (has(t.advice, Advice::cache_levels)) CHECK((allocated && *allocated == Verdict::stable));
    if (has(t.advice, Advice::cache_levels_live_lower)) CHECK((allocated && *allocated == Verdict::shrink));
    for (const auto a : {Advice::growth_summaries, Advice::caveat_one_log, Advice::leak_take_snapshots})
        CHECK_FALSE(has(t.advice, a));
}

void check_sums(const analysis::SnapshotDiff& d) {
    std::int64_t before = 0, after = 0;
    for (const auto& c : d.categories) {
        before += c.before_bytes;
        after += c.after_bytes;
    }
    CHECK(before == d.totals.allocated.before);
    CHECK(after == d.totals.allocated.after);
    std::int64_t sites = d.sites_not_listed_delta_bytes;
    for (const auto& s : d.sites) sites += s.delta_bytes;
    CHECK(sites == d.totals.allocated.delta);
    // A site's stacks shown and the rest add up to its change.
    for (const auto& s : d.sites) {
        if (s.stacks.empty()) continue;
        CAPTURE(s.site.label());
        test::check_stacks_add_up(s, s.delta_blocks, s.delta_bytes);
    }
}

void check_frames(const analysis::SnapshotDiff& d, const snapshot::Snapshot& a, const snapshot::Snapshot& b) {
    const auto before = frames_of(a), after = frames_of(b);
    for (const auto& s : d.sites)
        for (const auto& st : s.stacks) {
            // The frames of the side that holds more of the group, as it recorded them.
            const auto& side = st.delta_blocks >= 0 ? after : before;
            for (const auto i : st.frames) {
                const auto& f = d.frame_table.at(i);
                CAPTURE(f.filename);
                CAPTURE(f.name);
                CHECK(side.count({f.filename, f.line, f.name}) == 1);
            }
        }
}

void check_filters(const analysis::SnapshotDiff& d, const snapshot::Snapshot& a, const snapshot::Snapshot& b) {
    for (int filter = 0; filter < 3; ++filter) {
        auto o = test::with_steps(100, 500);
        if (filter == 0) o.top = 2;
        if (filter == 1) o.min_growth = 1 << 20;
        if (filter == 2) o.stacks.focus = {"\\.py"};
        const auto f = analysis::diff_snapshots(a, b, o);
        CAPTURE(filter);
        CHECK(f.comparability.same_process == d.comparability.same_process);
        CHECK(f.comparability.same_workload == d.comparability.same_workload);
        CHECK(f.comparability.order_known == d.comparability.order_known);
        CHECK(f.totals.allocated.delta == d.totals.allocated.delta);
        CHECK(f.totals.reserved.delta == d.totals.reserved.delta);
        if (filter < 2) CHECK(f.verdict == d.verdict);
    }
}

void check_formats(const analysis::SnapshotDiff& d) {
    const auto json = nlohmann::json::parse(test::render(d, report::Format::json));
    CHECK(json.at("verdict") == analysis::to_string(d.verdict));
    for (const auto format : {report::Format::text, report::Format::markdown, report::Format::csv})
        CHECK_FALSE(test::render(d, format).empty());
    test::check_markdown_blocks(test::render(d, report::Format::markdown));
}

void audit_pair(const Capture& a, const Capture& b, bool filters) {
    CAPTURE(a.name);
    CAPTURE(b.name);
    const auto d = analysis::diff_snapshots(a.snap, b.snap, test::with_steps(100, 500));
    check_preconditions(d);
    check_agreement(d);
    check_sums(d);
    check_frames(d, a.snap, b.snap);
    check_formats(d);
    if (filters) check_filters(d, a.snap, b.snap);
    // A capture of nothing holds no device: it cannot differ in devices.
    if (a.snap.segments.empty() || b.snap.segments.empty())
        for (const auto& w : d.warnings) CHECK(w.kind != analysis::FactKind::devices_differ);
}

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("audit: every ordered pair of real captures and their variants") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto captures = real_captures();
        REQUIRE(captures.size() >= 19);
        std::size_t pairs = 0;
        for (const auto& a : captures)
            for (const auto& b : captures) {
                audit_pair(a, b, &a == &b || a.name < b.name);
                ++pairs;
            }
        const auto variants = variants_of(captures);
        for (const auto& v : variants) {
            const auto& base = *std::find_if(captures.begin(), captures.end(),
                                             [&](const Capture& c) { return v.name.starts_with(c.name + " "); });
            audit_pair(base, v, true);
            audit_pair(v, base, false);
            pairs += 2;
        }
        MESSAGE(pairs << " pairs audited");
        CHECK(pairs >= captures.size() * captures.size() + variants.size() * 2);
    }

    TEST_CASE("audit: info / trace / trend on every real capture") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto captures = real_captures();
        std::vector<analysis::SeriesCapture> series;
        for (const auto& c : captures) {
            CAPTURE(c.name);
            auto every = test::all_sites();
            const auto info = test::describe(c.snap, every);
            std::int64_t categories = 0;
            for (const auto& cat : info.categories) categories += cat.bytes;
            CHECK(categories == info.totals.allocated_bytes);
            std::int64_t sites = 0;
            for (const auto& s : info.top_sites) sites += s.bytes;
            CHECK(sites == info.totals.allocated_bytes);
            CHECK(info.totals.requested_bytes <= info.totals.allocated_bytes);
            CHECK(info.totals.releasable_bytes + info.totals.non_releasable_bytes == info.totals.inactive_bytes);
            // trace: per-iteration verdicts only with three whole iterations or more.
            try {
                const auto t = analysis::analyze_trace(c.snap, every);
                for (const auto& s : t.sites) {
                    CAPTURE(s.site.label());
                    if (!t.iterations_judged) CHECK(s.verdict == Verdict::live);
                }
                CHECK(t.peak.bytes >= 0);
                (void)nlohmann::json::parse(report::render(t, report::Format::json, {}));
            } catch (const Error& e) {
                CHECK(e.kind() == ErrorKind::input);  // no trace: said, not crashed
            }
            series.push_back({c.name, analysis::describe_snapshot(c.snap, every)});
        }
        // The captures as one series, in name order: separate processes in an order nobody
        // gave. Levels only.
        const auto t = analysis::trend_snapshots(series, test::all_sites(), {});
        CHECK_FALSE(t.comparability.behaviour_allowed());
        CHECK_FALSE(analysis::is_behaviour(t.verdict));
        for (const auto& s : t.sites) CHECK_FALSE(analysis::is_behaviour(s.fit.verdict));
        for (const auto& s : t.totals) CHECK_FALSE(analysis::is_behaviour(s.fit.verdict));
        CHECK(t.advice.end() == std::find(t.advice.begin(), t.advice.end(), Advice::leak_references));
        check_trend_advice(t);
        // Each capture, the next, and the next again, at given steps (a repeat is a flat step).
        for (std::size_t i = 0; i + 1 < series.size(); ++i) {
            CAPTURE(series[i].file);
            analysis::TrendOptions steps;
            steps.steps = {100, 200, 300};
            check_trend_advice(
                analysis::trend_snapshots({series[i], series[i + 1], series[i + 1]}, test::all_sites(), steps));
        }
    }

    TEST_CASE("audit: every ordered pair of real summary tables") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::vector<std::pair<std::string, stats::StatsCapture>> tables;
        for (const auto& f : test::files_in(test::real_dir() / "summaries", ".txt"))
            tables.emplace_back(f.filename().string(),
                                stats::read_stats_text(test::read_text(f), f.filename().string()));
        REQUIRE(tables.size() >= 6);
        // Named, not bound: doctest's CAPTURE is a lambda, and clang 14 captures no binding.
        for (const auto& first : tables)
            for (const auto& second : tables) {
                const auto& a_name = first.first;
                const auto& a = first.second;
                const auto& b_name = second.first;
                const auto& b = second.second;
                CAPTURE(a_name);
                CAPTURE(b_name);
                analysis::StatsDiff d;
                try {
                    d = test::stats_diff(a, b, std::make_pair(std::int64_t{100}, std::int64_t{500}));
                } catch (const Error& e) {
                    CHECK(e.kind() == ErrorKind::input);  // nothing to pair: said, not crashed
                    continue;
                }
                // Two files show neither one process nor one workload; one file is one log.
                if (&a != &b) CHECK_FALSE(d.comparability.behaviour_allowed());
                for (const auto& dev : d.devices) {
                    if (!d.comparability.behaviour_allowed()) CHECK_FALSE(analysis::is_behaviour(dev.verdict));
                    if (dev.verdict == Verdict::stable || dev.verdict == Verdict::shrink)
                        for (const auto adv : dev.advice)
                            CHECK((adv == Advice::stable_nothing || adv == Advice::shrink_nothing ||
                                   adv == Advice::shrink_levels || adv == Advice::ooms_without_growth ||
                                   adv == Advice::retries_near_limit) == true);
                }
                const auto json = nlohmann::json::parse(test::render(d, report::Format::json));
                CHECK(json.at("kind") == "summary_diff");
            }
    }

}  // TEST_SUITE
