// The stages of the snapshot diff, each on its own, on hand-built inputs: match_blocks,
// group_sites, explain, rank_sites.

#include "analysis_support.hpp"
#include "model_maker.hpp"
#include "support.hpp"

#include <memsnap/analysis/diff/explain.hpp>
#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/analysis/diff/match_blocks.hpp>
#include <memsnap/analysis/diff/rank.hpp>
#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/trace_overlap.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

using namespace memsnap;
using analysis::Answer;
using analysis::Category;
using analysis::FactKind;
using analysis::Pattern;
using analysis::Verdict;

namespace {

constexpr std::int64_t MiB = 1 << 20;

const std::vector<test::FrameSpec> kTrain = {{"/p/train.py", 57, "train_step"}, {"/p/train.py", 120, "main"}};
const std::vector<test::FrameSpec> kModel = {{"/p/model.py", 80, "forward"}, {"/p/train.py", 42, "train_step"}};

// A site as group_sites would give it, for explain and rank.
analysis::SiteGroups site(std::string name, std::int64_t before_blocks, std::int64_t after_blocks, std::int64_t size,
                          std::int64_t survivors, Category category = Category::unknown) {
    analysis::SiteGroups s;
    auto& c = s.change;
    c.site = {"/p/" + name + ".py", name, 1, true, false, category};
    c.category = category;
    c.before_blocks = before_blocks;
    c.after_blocks = after_blocks;
    c.before_bytes = before_blocks * size;
    c.after_bytes = after_blocks * size;
    c.delta_blocks = after_blocks - before_blocks;
    c.delta_bytes = c.after_bytes - c.before_bytes;
    c.survivor_blocks = survivors;
    c.new_blocks = after_blocks - survivors;
    c.gone_blocks = before_blocks - survivors;
    c.growth_bytes_per_step = static_cast<double>(c.delta_bytes) / 400;
    s.groups.push_back({{analysis::CanonStackId{}, size, category}, {before_blocks, after_blocks, survivors}});
    return s;
}

analysis::TotalsChange totals_of(const std::vector<analysis::SiteGroups>& sites) {
    analysis::TotalsChange t;
    for (const auto& s : sites) {
        t.allocated.before += s.change.before_bytes;
        t.allocated.after += s.change.after_bytes;
    }
    t.allocated.delta = t.allocated.after - t.allocated.before;
    t.reserved = {t.allocated.before, t.allocated.after, t.allocated.delta, 0};
    return t;
}

const analysis::StackIndex& empty_index() {
    static const analysis::StackIndex index({}, {}, {});
    return index;
}

const util::Steps kSteps{std::make_pair(std::int64_t{100}, std::int64_t{500}), "--steps", ""};

// Captures of one process shown (yes), ruled out (no), or neither shown nor ruled out with
// the same workload (unknown) or with nothing known of the workload.
analysis::Comparability comparable(Answer process, Answer workload = Answer::unknown) {
    analysis::Comparability c;
    c.same_process = process;
    c.same_workload = workload;
    return c;
}

analysis::Explanation explain(const std::vector<analysis::SiteGroups>& sites, const analysis::Comparability& c) {
    const auto totals = totals_of(sites);
    return analysis::explain({totals, sites, empty_index(), c, kSteps, true, 0, false, 0, 0});
}

// The diagnosis a report would print for site i.
analysis::Diagnosis diagnosis_of(const std::vector<analysis::SiteGroups>& sites, const analysis::Explanation& e,
                                 const analysis::Comparability& c, std::size_t i) {
    return analysis::SiteDiagnoser(empty_index(), kSteps, c)(sites[i], e.sites[i]);
}

bool has_fact(const analysis::Facts& facts, FactKind kind) {
    return std::any_of(facts.begin(), facts.end(), [&](const analysis::Fact& f) { return f.kind == kind; });
}

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("match_blocks: survivors by address / size and stack / groups by (stack / size)") {
        test::ModelMaker a, b;
        const auto sa = a.stack(kTrain), ma = a.stack(kModel);
        const auto sb = b.stack(kTrain), mb = b.stack(kModel);
        a.segment(0, 0x1000, {{MiB, sa}, {MiB, ma}, {2 * MiB, ma, false}});
        b.segment(0, 0x1000, {{MiB, sb}, {MiB, mb}, {2 * MiB, mb}});  // the same, plus one new block
        b.segment(0, 0x900000, {{MiB, mb}});                          // a moved model block: new
        analysis::StackIndex index({&a.model(), &b.model()}, {}, {});
        const auto before = analysis::collect_blocks(a.model(), 0, index, std::nullopt);
        const auto after = analysis::collect_blocks(b.model(), 1, index, std::nullopt);
        CHECK(before.live.size() == 2);
        CHECK(after.live.size() == 4);
        const auto m = analysis::match_blocks(before, after);
        CHECK(m.live_before == 2);
        CHECK(m.live_after == 4);
        CHECK(m.survivors == 2);
        REQUIRE(m.groups.size() == 3);  // (train, 1 MiB), (model, 1 MiB), (model, 2 MiB)
        std::int64_t before_total = 0, after_total = 0, survivors = 0;
        for (const auto& [key, counts] : m.groups) {
            before_total += counts.before;
            after_total += counts.after;
            survivors += counts.survivors;
            CHECK(counts.survivors <= std::min(counts.before, counts.after));
        }
        CHECK(before_total == 2);
        CHECK(after_total == 4);
        CHECK(survivors == 2);
        CHECK(m.categories[static_cast<std::size_t>(Category::activation)].after_blocks == 3);
        // A device filter keeps only that device's blocks.
        CHECK(analysis::collect_blocks(b.model(), 1, index, 1).live.empty());
    }

    TEST_CASE("group_sites: groups under their site / named as info names them") {
        test::ModelMaker a;
        const auto s1 = a.stack(kModel);
        const auto s2 = a.stack({{"/x/site-packages/torch/nn/functional.py", 10, "linear"}, kModel[0], kModel[1]});
        a.segment(0, 0x1000, {{MiB, s1}, {2 * MiB, s2}, {4 * MiB, snapshot::no_stack}, {4 * MiB, snapshot::no_stack}});
        analysis::StackIndex index({&a.model(), &a.model()}, {}, {});
        const auto blocks = analysis::collect_blocks(a.model(), 0, index, std::nullopt);
        const auto same = analysis::collect_blocks(a.model(), 1, index, std::nullopt);
        const util::Steps steps;
        const auto sites = analysis::group_sites(analysis::match_blocks(blocks, same), index, steps);
        // Both stacks meet in model.py:80 forward; blocks without a stack are a site of their
        // own per block size, which has no stack to name a cause by.
        REQUIRE(sites.size() == 2);
        const auto& forward = sites[0].change.site.name == "forward" ? sites[0] : sites[1];
        const auto& unplaced = sites[0].change.site.name == "forward" ? sites[1] : sites[0];
        CHECK(forward.change.site.label() == "/p/model.py:80 forward");
        CHECK(forward.groups.size() == 2);
        CHECK(forward.change.after_bytes == 3 * MiB);
        CHECK(forward.change.category == Category::activation);
        CHECK(forward.change.has_stack);
        CHECK(unplaced.change.site.name == "<no stack: 4194304-byte blocks>");
        CHECK(unplaced.change.after_blocks == 2);
        CHECK_FALSE(unplaced.change.has_stack);
        const auto info = test::describe(a.model());
        CHECK(std::any_of(info.top_sites.begin(), info.top_sites.end(),
                          [&](const auto& t) { return t.site == forward.change.site; }));
    }

    TEST_CASE("explain: new blocks that stay in one process are a leak even when frees hide them") {
        // +120 MiB of new blocks that stay, -100 MiB freed elsewhere: allocated +20 MiB, under a
        // noise floor of 0.5% of 16 GiB, yet a leak.
        const std::vector<analysis::SiteGroups> sites = {site("leaky", 10, 50, 3 * MiB, 10),
                                                         site("freed", 100, 75, 4 * MiB, 75),
                                                         site("big", 4000, 4000, 4 * MiB, 4000)};
        const auto one = comparable(Answer::yes);
        const auto e = explain(sites, one);
        CHECK(e.verdict == Verdict::leak);
        CHECK(e.sites[0].verdict == Verdict::leak);
        CHECK(e.sites[1].verdict == Verdict::freed);
        CHECK(e.sites[2].verdict == Verdict::stable);
        CHECK(diagnosis_of(sites, e, one, 0).pattern == Pattern::retained_tensors);
        CHECK(diagnosis_of(sites, e, one, 2).empty());  // stable: nothing to say
        CHECK(has_fact(e.evidence, FactKind::sites_stay));
        CHECK_FALSE(has_fact(e.evidence, FactKind::growth_reason));
        // The allocated change is within its noise floor: no shares.
        CHECK_FALSE(e.sites[0].share.has_value());
        // No caveat when one process is shown.
        CHECK(std::find(e.advice.begin(), e.advice.end(), analysis::Advice::caveat_same_workload) == e.advice.end());

        SUBCASE("two processes: levels only, no leak and no cause named") {
            const auto two = comparable(Answer::no, Answer::yes);
            const auto other = explain(sites, two);
            CHECK(other.verdict == Verdict::stable);  // allocated within its floor
            for (const auto& j : other.sites) CHECK(j.verdict != Verdict::leak);
            CHECK(other.sites[0].verdict == Verdict::growth);
            CHECK(diagnosis_of(sites, other, two, 0).empty());
        }
        SUBCASE("one process not shown, nothing known of the workload: levels only") {
            const auto unknown = comparable(Answer::unknown, Answer::unknown);
            const auto e2 = explain(sites, unknown);
            for (const auto& j : e2.sites) CHECK(j.verdict != Verdict::leak);
            CHECK(diagnosis_of(sites, e2, unknown, 0).empty());
        }
        SUBCASE("one process not ruled out and the same workload: the leak, with its caveat") {
            const auto caveat = comparable(Answer::unknown, Answer::yes);
            const auto e3 = explain(sites, caveat);
            CHECK(e3.verdict == Verdict::leak);
            CHECK(e3.advice.front() == analysis::Advice::caveat_same_workload);
        }
        SUBCASE("an unknown order: levels only and without direction") {
            auto unordered = one;
            unordered.order_known = false;
            const auto e4 = explain(sites, unordered);
            CHECK(e4.verdict == Verdict::stable);
            CHECK(e4.sites[0].verdict == Verdict::differs);
        }
    }

    TEST_CASE("explain: allocated growth without a comparable pair is growth with the reason") {
        const std::vector<analysis::SiteGroups> sites = {site("leaky", 10, 200, 3 * MiB, 10),
                                                         site("big", 1000, 1000, 4 * MiB, 1000)};
        const auto e = explain(sites, comparable(Answer::no));
        CHECK(e.verdict == Verdict::growth);
        const auto reason = std::find_if(e.evidence.begin(), e.evidence.end(),
                                         [](const auto& f) { return f.kind == FactKind::growth_reason; });
        REQUIRE(reason != e.evidence.end());
        CHECK(reason->word("reason") == "other_process");
        CHECK(std::find(e.advice.begin(), e.advice.end(), analysis::Advice::growth_cannot_tell) != e.advice.end());
        CHECK(std::find(e.advice.begin(), e.advice.end(), analysis::Advice::leak_references) == e.advice.end());
        // Growth of blocks without a stack: nothing places it, even in one process.
        auto unplaced = sites;
        unplaced[0].change.has_stack = false;
        const auto u = explain(unplaced, comparable(Answer::yes));
        CHECK(u.verdict == Verdict::growth);
        CHECK(u.sites[0].verdict == Verdict::growth);
        CHECK(diagnosis_of(unplaced, u, comparable(Answer::yes), 0).empty());
    }

    TEST_CASE("explain: first appearances of gradients and optimizer state are one-time growth") {
        const std::vector<analysis::SiteGroups> sites = {site("params", 100, 100, 4 * MiB, 100, Category::parameter),
                                                         site("grads", 0, 100, 4 * MiB, 0, Category::gradient),
                                                         site("adam", 0, 200, 4 * MiB, 0, Category::optimizer_state)};
        const auto one = comparable(Answer::yes);
        const auto e = explain(sites, one);
        CHECK(e.verdict == Verdict::one_time_growth);
        CHECK(e.sites[1].verdict == Verdict::one_time_growth);
        CHECK(e.sites[2].verdict == Verdict::one_time_growth);
        CHECK(e.overall.pattern == Pattern::optimizer_first_step);
        for (const auto a : e.advice) CHECK(a != analysis::Advice::leak_detach);
        // Optimizer state that was there and keeps growing is not a first step.
        const std::vector<analysis::SiteGroups> again = {
            site("adam", 200, 400, 4 * MiB, 200, Category::optimizer_state)};
        CHECK(explain(again, one).sites[0].verdict == Verdict::leak);
    }

    TEST_CASE("explain: as many blocks holding more bytes is shape growth / with the counts it rests on") {
        auto same_count = site("attn", 10, 10, 0, 0);
        same_count.change.before_bytes = 10 * MiB;
        same_count.change.after_bytes = 40 * MiB;
        same_count.change.delta_bytes = 30 * MiB;
        same_count.change.new_blocks = same_count.change.gone_blocks = 10;
        same_count.change.growth_bytes_per_step = 30.0 * MiB / 400;
        auto fewer = same_count;
        fewer.change.site.name = "fewer";
        fewer.change.after_blocks = 5;
        fewer.change.delta_blocks = -5;
        fewer.change.new_blocks = 5;
        const std::vector<analysis::SiteGroups> sites = {same_count, fewer};
        const auto one = comparable(Answer::yes);
        const auto e = explain(sites, one);
        CHECK(e.verdict == Verdict::shape_growth);
        CHECK(e.sites[0].verdict == Verdict::shape_growth);
        const auto same = diagnosis_of(sites, e, one, 0);
        REQUIRE_FALSE(same.evidence.empty());
        CHECK(same.evidence.front().kind == FactKind::site_same_blocks);
        CHECK(same.evidence.front().integer("blocks") == 10);
        const auto less = diagnosis_of(sites, e, one, 1);
        REQUIRE_FALSE(less.evidence.empty());
        CHECK(less.evidence.front().kind == FactKind::site_fewer_blocks);
        CHECK(less.evidence.front().integer("before") == 10);
        CHECK(less.evidence.front().integer("after") == 5);
        // Shape growth is a level: two processes give it too.
        CHECK(explain(sites, comparable(Answer::no)).verdict == Verdict::shape_growth);
    }

    TEST_CASE("explain: growth below the noise floor is no leak / and no site says otherwise") {
        const std::vector<analysis::SiteGroups> sites = {site("tiny", 10, 12, 512, 10),
                                                         site("big", 4000, 4000, 4 * MiB, 4000)};
        const auto one = comparable(Answer::yes);
        const auto e = explain(sites, one);
        CHECK(e.verdict == Verdict::stable);
        CHECK(e.sites[0].verdict == Verdict::growth);
        CHECK(diagnosis_of(sites, e, one, 0).empty());
        const auto stays = std::find_if(e.evidence.begin(), e.evidence.end(),
                                        [](const auto& f) { return f.kind == FactKind::sites_stay; });
        REQUIRE(stays != e.evidence.end());
        CHECK_FALSE(stays->is("above"));
    }

    TEST_CASE("rank: leak sites first / then growth per step / bytes / name") {
        std::vector<analysis::SiteGroups> sites = {site("grads", 0, 100, 4 * MiB, 0, Category::gradient),
                                                   site("leaky", 10, 20, MiB, 10), site("a", 5, 5, MiB, 5),
                                                   site("b", 5, 5, MiB, 5)};
        const auto one = comparable(Answer::yes);
        const auto e = explain(sites, one);
        const analysis::SiteDiagnoser diagnose(empty_index(), kSteps, one);
        const auto r = analysis::rank_sites(sites, e.sites, diagnose, empty_index(), true,
                                            {0, 0, analysis::StackSamples::changed});
        REQUIRE(r.sites.size() == 4);
        CHECK(r.sites[0].diagnosis.pattern == Pattern::retained_tensors);
        CHECK(r.sites[0].site.name == "leaky");  // a leak outranks bigger one-time growth
        CHECK(r.sites[0].verdict == Verdict::leak);
        CHECK(r.sites[1].site.name == "grads");
        CHECK(r.sites[2].site.name == "a");  // ties broken by name
        CHECK(r.sites[3].site.name == "b");
        for (std::size_t i = 0; i < r.sites.size(); ++i) CHECK(r.sites[i].rank == i + 1);
        std::size_t grew = 0;
        for (const auto& sample : r.stack_samples) grew += sample.delta_bytes() > 0;
        CHECK(grew == 2);  // grads and leaky grew
        CHECK(analysis::rank_sites(sites, e.sites, diagnose, empty_index(), true).stack_samples.empty());
        // --top and --min-growth: only the listed sites are built; the fastest is kept apart.
        const auto top = analysis::rank_sites(sites, e.sites, diagnose, empty_index(), true, {1, 0});
        REQUIRE(top.sites.size() == 1);
        CHECK(top.beyond_top == 3);
        CHECK(top.total == 4);
        REQUIRE(top.fastest.has_value());
        CHECK(top.fastest->site.name == "grads");
        CHECK(top.fastest->rank == 2);
        const auto big = analysis::rank_sites(sites, e.sites, diagnose, empty_index(), true, {0, 20 * MiB});
        CHECK(big.below_min_growth == 3);  // only grads changed by 20 MiB or more
        CHECK(big.sites.front().site.name == "grads");
    }

}  // TEST_SUITE

TEST_SUITE("unit") {
    TEST_CASE("compare_traces counts the events two traces share in the time they both cover") {
        const auto event = [](snapshot::TraceAction action, std::int64_t addr, std::int64_t time, int device = 0) {
            snapshot::TraceEvent e;
            e.set_action(action);
            e.addr = addr;
            e.size = 512;
            e.time_us = time;
            e.device = static_cast<std::int16_t>(device);
            return e;
        };
        using snapshot::TraceAction;
        snapshot::Snapshot before, after;
        // before: times 10..19; after: times 15..24, sharing 15..19 except one event at 17 that
        // differs in address, and with two events at time 18 written in another order.
        std::vector<snapshot::TraceEvent> b, a;
        for (int t = 10; t < 20; ++t) b.push_back(event(TraceAction::alloc, 4096 * t, t));
        b.insert(b.begin() + 9, event(TraceAction::free_completed, 4096 * 18, 18));
        for (int t = 15; t < 25; ++t) a.push_back(event(TraceAction::alloc, t == 17 ? 1 : 4096 * t, t));
        a.insert(a.begin() + 3, event(TraceAction::free_completed, 4096 * 18, 18));
        before.events = {b.begin(), b.end()};
        after.events = {a.begin(), a.end()};
        const auto in_order = analysis::compare_traces(before, after, std::nullopt);
        CHECK(in_order.overlapping == 6);  // 15..19 and the free at 18, on both sides
        CHECK(in_order.shared == 5);       // all but the alloc at 17

        SUBCASE("a second device's trace after the first (out of time order) gives the same counts") {
            for (auto* s : {&before, &after}) {
                const auto first = s->events;
                for (auto e : first) {
                    e.device = 1;
                    s->events.push_back(e);
                }
            }
            const auto both = analysis::compare_traces(before, after, std::nullopt);
            CHECK(both.overlapping == 12);
            CHECK(both.shared == 10);
            const auto one = analysis::compare_traces(before, after, 1);
            CHECK(one.overlapping == 6);
            CHECK(one.shared == 5);
        }
        SUBCASE("an event out of time order at the end of a trace: its window comes from every event") {
            after.events.push_back(event(TraceAction::alloc, 1 << 20, 5));
            const auto late = analysis::compare_traces(before, after, std::nullopt);
            CHECK(late.overlapping == 6);
            CHECK(late.shared == 5);
        }
        SUBCASE("long traces, walked in two halves at once, give the counts of one walk") {
            // Times 0..2^17-1 before and 2^16..(3*2^16)-1 after: half of each overlaps; every
            // 1000th event after differs in address.
            constexpr int n = 1 << 17, shift = 1 << 16;
            std::vector<snapshot::TraceEvent> x, y;
            for (int t = 0; t < n; ++t) x.push_back(event(TraceAction::alloc, 4096 * t, t));
            for (int t = shift; t < n + shift; ++t) y.push_back(event(TraceAction::alloc, t % 1000 ? 4096 * t : 1, t));
            // Stacks on every third event before and every fifth after (all devices' when none is given).
            for (std::size_t i = 0; i < x.size(); i += 3) x[i].stack = snapshot::StackId(7);
            for (std::size_t i = 0; i < y.size(); i += 5) y[i].stack = snapshot::StackId(7);
            const std::size_t with_stack = (x.size() + 2) / 3 + (y.size() + 4) / 5;
            std::size_t expected_shared = 0;
            for (int t = shift; t < n; ++t) expected_shared += t % 1000 != 0;
            const auto compare = [&](const std::vector<snapshot::TraceEvent>& a,
                                     const std::vector<snapshot::TraceEvent>& b, std::optional<int> device) {
                before.events = {a.begin(), a.end()};
                after.events = {b.begin(), b.end()};
                return analysis::compare_traces(before, after, device);
            };
            const auto halves = compare(x, y, std::nullopt);
            CHECK(halves.in_halves);
            CHECK(halves.with_stack == with_stack);
            CHECK(halves.overlapping == static_cast<std::size_t>(n - shift));
            CHECK(halves.shared == expected_shared);
            // An event moved across the split: the halves do not hold and the answer comes from a
            // whole walk or the sorted comparison, with the same counts.
            auto moved = x;
            std::swap(moved[10], moved[n / 2 + 10]);
            const auto out_of_order = compare(moved, y, std::nullopt);
            CHECK_FALSE(out_of_order.in_halves);
            CHECK_FALSE(out_of_order.with_stack);  // the sorted comparison does not read them
            CHECK(out_of_order.overlapping == halves.overlapping);
            CHECK(out_of_order.shared == halves.shared);
            // A second device's trace after the first: per device, the same counts again.
            auto x2 = x, y2 = y;
            for (auto e : x) x2.push_back((e.device = 1, e));
            for (auto e : y) y2.push_back((e.device = 1, e));
            for (const int device : {0, 1}) {
                const auto one = compare(x2, y2, device);
                CHECK(one.overlapping == halves.overlapping);
                CHECK(one.shared == halves.shared);
                CHECK(one.with_stack == with_stack);
            }
            const auto both = compare(x2, y2, std::nullopt);
            CHECK(both.overlapping == 2 * halves.overlapping);
            CHECK(both.shared == 2 * halves.shared);
            CHECK(both.with_stack == 2 * with_stack);  // walked a device at a time: every event read
            CHECK(both.in_halves);                     // each device in halves
            // Device 0's events split around device 1's (no torch writes that): compared sorted,
            // with the same counts.
            auto x3 = x2;
            x3.push_back(x3.front());
            x3.erase(x3.begin());
            const auto split = compare(x3, y2, std::nullopt);
            CHECK_FALSE(split.with_stack);
            CHECK(split.overlapping == both.overlapping);
            CHECK(split.shared == both.shared);
        }
        SUBCASE("microseconds of several events: what both share of each, in any order, as counted sorted") {
            // Random traces of one to five events a microsecond from a few keys; the second
            // copies the first from a later time, each microsecond's events shuffled, some
            // dropped, added or changed. The walk counts equal events met side by side and
            // sorts a microsecond's rest from the first that differ: it must count what sorting
            // every event of the window and intersecting would.
            std::mt19937 shuffled(2024);
            const auto pick = [&shuffled](int n) { return static_cast<int>(shuffled() % static_cast<unsigned>(n)); };
            for (int round = 0; round < 40; ++round) {
                std::vector<snapshot::TraceEvent> x, y;
                const auto any_event = [&](int time) {
                    return event(pick(2) ? TraceAction::alloc : TraceAction::free_completed, 512 * pick(4), time);
                };
                for (int t = 0; t < 300; ++t)
                    for (int k = 1 + pick(5); k > 0; --k) x.push_back(any_event(t));
                const int start = pick(100), end = 300 + pick(50);
                for (int t = start; t < end; ++t) {
                    std::vector<snapshot::TraceEvent> group;
                    for (const auto& e : x)
                        if (e.time_us == t) group.push_back(e);
                    if (group.empty()) group.push_back(any_event(t));
                    if (pick(3) == 0) std::shuffle(group.begin(), group.end(), shuffled);
                    if (pick(4) == 0) group.erase(group.begin() + pick(static_cast<int>(group.size())));
                    if (pick(4) == 0)
                        group.insert(group.begin() + pick(static_cast<int>(group.size()) + 1), any_event(t));
                    if (pick(5) == 0 && !group.empty())
                        group[static_cast<std::size_t>(pick(static_cast<int>(group.size())))].addr += 1 << 20;
                    y.insert(y.end(), group.begin(), group.end());
                }
                REQUIRE(!y.empty());
                const std::int64_t from = std::max(x.front().time_us, y.front().time_us);
                const std::int64_t to = std::min(x.back().time_us, y.back().time_us);
                using Key = std::tuple<std::int64_t, std::int64_t, int>;
                std::map<Key, std::size_t> in_x, in_y;
                std::size_t count_x = 0, count_y = 0;
                for (const auto& e : x)
                    if (e.time_us >= from && e.time_us <= to)
                        ++in_x[{e.time_us, e.addr, static_cast<int>(e.action())}], ++count_x;
                for (const auto& e : y)
                    if (e.time_us >= from && e.time_us <= to)
                        ++in_y[{e.time_us, e.addr, static_cast<int>(e.action())}], ++count_y;
                std::size_t expected = 0;
                for (const auto& [key, n] : in_x)
                    if (const auto it = in_y.find(key); it != in_y.end()) expected += std::min(n, it->second);
                before.events = {x.begin(), x.end()};
                after.events = {y.begin(), y.end()};
                const auto walked = analysis::compare_traces(before, after, std::nullopt);
                CHECK(walked.with_stack.has_value());  // walked in time order, not sorted whole
                CHECK(walked.overlapping == std::min(count_x, count_y));
                CHECK(walked.shared == expected);
            }
        }
        SUBCASE("events with a stack are counted on both sides, untimed ones and those outside the window too") {
            std::vector<snapshot::TraceEvent> with(b.begin(), b.end());
            for (auto& e : with) e.stack = snapshot::StackId(3);  // 11, all before the window or in it
            with.push_back(event(TraceAction::alloc, 1, -1));     // untimed
            with.back().stack = snapshot::StackId(3);
            before.events = {with.begin(), with.end()};
            std::vector<snapshot::TraceEvent> later(a.begin(), a.end());
            later.back().stack = snapshot::StackId(3);  // after the window
            after.events = {later.begin(), later.end()};
            const auto counted = analysis::compare_traces(before, after, std::nullopt);
            CHECK(counted.with_stack == 11u + 1u + 1u);
        }
        SUBCASE("traces that do not meet in time share nothing") {
            for (std::size_t i = 0; i < after.events.size(); ++i) {
                auto e = after.events[i];
                e.time_us += 100;
                e.stack = snapshot::StackId(i % 2);  // every second one has a stack
                after.events.set(i, e);
            }
            const auto apart = analysis::compare_traces(before, after, std::nullopt);
            CHECK(apart.overlapping == 0);
            CHECK(apart.shared == 0);
            CHECK(apart.with_stack == after.events.size() / 2);
        }
    }

}  // TEST_SUITE
