// The documents of `trend` ("kind": "trend") and `ranks` ("kind": "ranks").
#include "common.hpp"
#include "documents.hpp"
#include "phrases.hpp"

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace memsnap::report::doc {

namespace {

// How a series was judged: its figures mean only what the judgement could use.
struct FitShown {
    bool steps_known = false;
    bool ordered = false;       // without a known order a slope, its R² and the share of
                                // intervals not down describe the order the files were given
                                // in, not the program: they are null, and not shown
    bool shape_judged = false;  // between captures not shown comparable (levels), R² and the
                                // share not down would read as a steady leak: null, not shown
};

FitShown fit_shown(const analysis::TrendResult& t) {
    return {t.steps_known, t.comparability.order_known, t.comparability.behaviour_allowed()};
}

// Compared as levels (ordered, shape not judged) people see the change first to last (a table's
// column, when `change` is given; a site's headline says it); a rate per step between captures not
// shown to be one run would read as the program's behaviour.
void add_fit(Node& out, const analysis::SeriesFit& f, const FitShown& shown,
             std::optional<std::int64_t> change = std::nullopt) {
    if (shown.ordered && shown.shape_judged) {
        out.add("slope_bytes_per_step", Value::rate(f.slope_bytes_per_step, shown.steps_known), "slope");
    } else if (shown.ordered) {
        out.add("slope_bytes_per_step", Value::rate(f.slope_bytes_per_step, shown.steps_known)).machines_only();
        if (change) out.add("change", Value::signed_bytes(*change), "change").people_only();
    } else {
        out.add("slope_bytes_per_step", Value::none()).machines_only();
    }
    if (shown.ordered && shown.shape_judged) {
        out.add("r2", f.r2_defined ? Value::number(f.r2, 2) : Value::none(), "R²");
        out.add("monotonic_share", Value::share(f.monotonic_share), "not down");
    } else {
        for (const char* key : {"r2", "monotonic_share"}) out.add(key, Value::none()).machines_only();
    }
    out.add("first_step", Value::optional<std::int64_t>(f.first_step, Value::count)).machines_only();
    out.add("verdict", Value::verdict(analysis::to_string(f.verdict)));
}

Node series_table(std::string key, std::string label, const std::vector<analysis::TrendSeries>& all,
                  const FitShown& shown) {
    const bool ordered = shown.ordered;
    auto out = Node::list(std::move(key), all.empty() ? Layout::hidden : Layout::table, std::move(label));
    out.keyed_by = "name";
    for (const auto& s : all) {
        auto& row = out.add(Node::object("", Layout::facts));
        row.add("name", Value::word(s.name));
        const auto [low, high] = std::minmax_element(s.bytes.begin(), s.bytes.end());
        if (ordered) {
            row.add("first", Value::bytes(s.bytes.front())).people_only();
            row.add("last", Value::bytes(s.bytes.back())).people_only();
        } else {  // a set, not a sequence: its range
            row.add("lowest", Value::bytes(*low)).people_only();
            row.add("highest", Value::bytes(*high)).people_only();
        }
        const std::int64_t floor = s.bytes.empty() ? 0 : analysis::noise_threshold(*low, *high);
        row.add("shape", Value::text_of(sparkline(s.bytes, floor))).people_only();
        add_fit(row, s.fit, shown, s.bytes.empty() ? 0 : s.bytes.back() - s.bytes.front());
        row.add(numbers("bytes_by_step", s.bytes));
        if (!s.blocks.empty()) row.add(numbers("blocks_by_step", s.blocks));
    }
    return out;
}

std::string joined_steps(const std::vector<std::int64_t>& steps) {
    std::string out;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (i == 8 && steps.size() > 10) {
            out += fmt::format(", … {} more", steps.size() - 9);
            i = steps.size() - 1;
        }
        out += fmt::format("{}{}", out.empty() ? "" : ", ", steps[i]);
    }
    return out;
}

Node trend_site(const analysis::TrendSite& s, const analysis::TrendResult& t) {
    auto r = Node::object("", Layout::facts);
    r.add("rank", Value::count(static_cast<std::int64_t>(s.rank))).in_headline();
    const FitShown shown = fit_shown(t);
    const bool ordered = shown.ordered;
    const auto change = s.bytes_by_step.empty() ? std::int64_t{0} : s.bytes_by_step.back() - s.bytes_by_step.front();
    if (ordered && shown.shape_judged) {
        r.add("slope_text", Value::rate(s.fit.slope_bytes_per_step, t.steps_known)).people_only().in_headline();
    } else if (ordered) {
        r.add("change_text", Value::signed_bytes(change)).people_only().in_headline();
    } else {
        const auto [low, high] = std::minmax_element(s.bytes_by_step.begin(), s.bytes_by_step.end());
        r.add("spread_text",
              Value::text_of(fmt::format("spread {}", util::human_bytes(low == high ? 0 : *high - *low))))
            .people_only()
            .in_headline();
    }
    r.add("verdict_text", Value::verdict(analysis::to_string(s.fit.verdict))).people_only().in_headline();
    add_site(r, s.site);
    r.add("category", Value::word(analysis::to_string(s.category))).in_headline();
    add_fit(r, s.fit, shown);
    // The headline carries the slope or change and the verdict for people.
    for (auto& field : r.items)
        if (field.key == "slope_bytes_per_step" || field.key == "verdict") field.machines_only();
    const auto first = [](const std::vector<std::int64_t>& v) { return v.empty() ? 0 : v.front(); };
    const auto last = [](const std::vector<std::int64_t>& v) { return v.empty() ? 0 : v.back(); };
    const auto lowest = [](const std::vector<std::int64_t>& v) {
        return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
    };
    const auto highest = [](const std::vector<std::int64_t>& v) {
        return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    };
    std::string shape =
        ordered ? fmt::format("{} {} → {}, blocks {} → {}", sparkline(s.bytes_by_step),
                              util::human_bytes(first(s.bytes_by_step)), util::human_bytes(last(s.bytes_by_step)),
                              first(s.blocks_by_step), last(s.blocks_by_step))
                : fmt::format("{} between {} and {}, blocks between {} and {}", sparkline(s.bytes_by_step),
                              util::human_bytes(lowest(s.bytes_by_step)), util::human_bytes(highest(s.bytes_by_step)),
                              lowest(s.blocks_by_step), highest(s.blocks_by_step));
    // "First" needs an order, and one run: compared as levels the shape shows where it is held.
    if (s.fit.first_step && ordered && shown.shape_judged)
        shape += t.steps_known ? fmt::format(", first seen at step {}", *s.fit.first_step)
                               : fmt::format(", first seen in capture {}", *s.fit.first_step + 1);
    r.add("shape", Value::text_of(shape)).people_only();
    r.add(numbers("bytes_by_step", s.bytes_by_step));
    r.add(numbers("blocks_by_step", s.blocks_by_step));
    r.add(diagnosis(s.diagnosis));
    return r;
}

}  // namespace

Document trend(const analysis::TrendResult& t) {
    Document doc;
    doc.kind = "trend";
    doc.title = fmt::format("trend of {} {} captures{}", t.steps.size(), analysis::to_string(t.kind),
                            t.device ? fmt::format(", device {}", *t.device) : "");
    auto& root = doc.root;
    root.add("input_kind", Value::word(std::string(analysis::to_string(t.kind)))).machines_only();
    // Files and points are made as they are written: a log may hold 300 000 tables.
    auto& files = root.add(Node::list("files", Layout::hidden));
    files.count = t.files.size();
    files.make = [&t](std::size_t i) { return Node::of("", Value::text_of(t.files[i])); };
    root.add(numbers("steps", t.steps));
    const auto& c = t.comparability;
    comparability_lines(root, c);
    root.add(comparability(c)).machines_only();
    root.add("steps_text",
             Value::text_of(fmt::format("{} ({}{})", joined_steps(t.steps), t.steps_source,
                                        t.steps_known ? "" : ": positions, not steps")),
             "steps")
        .people_only();
    root.add("steps_source", Value::word(t.steps_source)).machines_only();
    root.add("steps_known", Value::flag(t.steps_known)).machines_only();
    auto& warmup = root.add("warmup", Value::count(static_cast<std::int64_t>(t.warmup)), "warm-up");
    warmup.note = "interval(s) left out of the fit";
    if (t.warmup == 0) warmup.machines_only();
    root.add("device", Value::optional<int>(t.device, [](int v) { return Value::count(v); })).machines_only();
    auto& points = root.add(Node::list("points", Layout::table, "Captures, in the order judged"));
    points.count = t.points.size();
    points.make = [&t](std::size_t i) {
        auto row = Node::object("", Layout::facts);
        row.add("position", Value::count(static_cast<std::int64_t>(i + 1)), "#");
        row.add("step", t.steps_known ? Value::count(t.points[i].step) : Value::none());
        row.add("file", Value::text_of(t.file_of(t.points[i])));
        return row;
    };
    auto& verdict = root.add(Node::object("verdict_block", Layout::section, "Verdict"));
    verdict.merge = true;
    verdict.add("verdict", Value::verdict(analysis::to_string(t.verdict))).in_headline();
    verdict.add(facts("evidence", t.evidence));
    verdict.add(advice("advice", t.advice, "advice"));
    const FitShown shown = fit_shown(t);
    root.add(series_table("totals", "Totals", t.totals, shown));
    root.add(series_table("categories", "Categories of live memory", t.categories, shown));
    const char* ranked_by = !shown.ordered       ? "how far apart their values lie"
                            : shown.shape_judged ? "slope weighted by R² and monotonic share"
                                                 : "least-squares slope across the captures";
    auto& sites = root.add(Node::list(
        "sites", Layout::records, fmt::format("Sites ({} of {}, by {})", t.sites.size(), t.sites_total, ranked_by)));
    sites.primary = true;
    sites.prototype = std::make_shared<const Node>(trend_site(analysis::TrendSite{}, t));  // CSV header of none
    if (t.kind != analysis::SeriesKind::snapshot) sites.machines_only();
    for (const auto& s : t.sites) sites.add(trend_site(s, t));
    root.add("sites_total", Value::count(static_cast<std::int64_t>(t.sites_total))).machines_only();
    root.add(facts("notes", t.notes, "Notes"));
    root.add(facts("warnings", t.warnings)).machines_only();
    return doc;
}

namespace {

Node categories_of(const std::array<analysis::CategoryUsage, analysis::category_count>& usage) {
    auto out = Node::object("categories", Layout::hidden);
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (usage[k].blocks != 0) {
            auto& c = out.add(
                Node::object(std::string(analysis::to_string(static_cast<analysis::Category>(k))), Layout::facts));
            c.add("bytes", Value::bytes(usage[k].bytes));
            c.add("blocks", Value::count(usage[k].blocks));
        }
    return out;
}

Node rank_row(const analysis::RankSummary& k, const analysis::RanksResult& r) {
    auto row = Node::object("", Layout::facts);
    row.add("rank", Value::count(k.rank));
    auto& totals = row.add(Node::object("totals", Layout::line));
    totals.merge = false;
    totals.add("allocated_bytes", Value::bytes(k.totals.allocated_bytes), "allocated");
    totals.add("reserved_bytes", Value::bytes(k.totals.reserved_bytes), "reserved");
    totals.add("active_bytes", Value::bytes(k.totals.active_bytes), "active");
    totals.add("inactive_split_bytes", Value::bytes(k.totals.inactive_split_bytes), "inactive split");
    totals.machines_only();
    row.add("allocated", Value::bytes(k.totals.allocated_bytes)).people_only();
    row.add("vs_median", Value::signed_bytes(k.totals.allocated_bytes - r.median.allocated_bytes), "vs median")
        .people_only();
    row.add("reserved", Value::bytes(k.totals.reserved_bytes)).people_only();
    row.add("file", Value::text_of(k.file));
    row.add(categories_of(k.categories));
    auto& top = row.add(Node::list("top_sites", Layout::hidden));
    for (const auto& s : k.top_sites) {
        auto& site = top.add(Node::object("", Layout::facts));
        add_site(site, s.site, false);
        site.add("category", Value::word(analysis::to_string(s.category)));
        site.add("bytes", Value::bytes(s.bytes));
        site.add("blocks", Value::count(s.blocks));
    }
    return row;
}

Node outlier_record(const analysis::RankOutlier& o, std::int64_t median_rank) {
    auto r = Node::object("", Layout::facts);
    r.add("rank", Value::count(o.rank)).in_headline();
    r.add("verdict", Value::verdict(analysis::to_string(o.verdict))).in_headline();
    r.add("file", Value::text_of(o.file)).machines_only();
    r.add("allocated_bytes", Value::bytes(o.allocated_bytes), "allocated").in_headline();
    r.add("delta_bytes", Value::signed_bytes(o.delta_bytes), "against the median").in_headline();
    r.add("ooms", Value::count(o.ooms)).machines_only();
    const auto& moment = o.oom_moment;
    r.add("levels_at", Value::word(moment ? "oom" : "snapshot")).machines_only();
    r.add("oom_event", moment ? Value::count(static_cast<std::int64_t>(moment->event)) : Value::none()).machines_only();
    r.add("oom_time_us", moment && moment->time_us >= 0 ? Value::count(moment->time_us) : Value::none())
        .machines_only();
    r.add("snapshot_allocated_bytes", Value::bytes(o.snapshot_allocated_bytes)).machines_only();
    const auto shows =
        o.device ? fmt::format("memsnap trace --device {}", *o.device) : std::string("memsnap trace on its file");
    if (moment) {
        const auto when = o.trace_first_us && moment->time_us >= 0
                              ? fmt::format(", {:.3f} s after {} trace's first event",
                                            static_cast<double>(moment->time_us - *o.trace_first_us) / 1e6,
                                            o.device ? fmt::format("device {}'s", *o.device) : std::string("its"))
                              : std::string();
        r.add("at_oom",
              Value::text_of(fmt::format(
                  "these levels and sites are what it held at {}{}, replayed from its trace, against the median of "
                  "the ranks' snapshots; its own snapshot, taken after, holds {} allocated ({} shows that moment)",
                  o.ooms == 1 ? "its out-of-memory error" : "the last of its out-of-memory errors", when,
                  util::human_bytes(o.snapshot_allocated_bytes), shows)),
              "ran out of memory")
            .people_only();
    } else if (o.ooms > 0) {
        r.add("after_oom",
              Value::text_of(fmt::format("these levels are what {} left, not what filled the device: {} shows "
                                         "that moment",
                                         o.ooms == 1 ? "its out-of-memory error" : "its out-of-memory errors", shows)),
              "ran out of memory")
            .people_only();
    }
    auto& cats = r.add(
        Node::object("categories", Layout::line, fmt::format("categories against the median rank ({})", median_rank)));
    for (const auto& [category, delta] : o.categories)
        cats.add(std::string(analysis::to_string(category)), Value::signed_bytes(delta),
                 std::string(analysis::to_string(category)));
    auto& sites = r.add(Node::list("sites", Layout::table, "sites"));
    for (const auto& s : o.sites) {
        auto& row = sites.add(Node::object("", Layout::facts));
        row.add("delta_bytes", Value::signed_bytes(s.delta_bytes), "change");
        row.add("bytes", Value::bytes(s.bytes), "here");
        row.add("median_bytes", Value::bytes(s.median_bytes), "median");
        row.add("category", Value::word(analysis::to_string(s.category)));
        row.add("site", site(s.site)).people_only();
        row.add("frame", Value::frame(s.site.filename, s.site.line, s.site.name)).machines_only();
    }
    return r;
}

}  // namespace

Document ranks(const analysis::RanksResult& r) {
    Document doc;
    doc.kind = "ranks";
    doc.title = fmt::format("ranks: {} captures (ranks from {})", r.ranks.size(), r.rank_source);
    auto& root = doc.root;
    root.add("rank_source", Value::word(r.rank_source)).machines_only();
    root.add("median_rank", Value::count(r.median_rank)).machines_only();
    // Each figure's median is an observed value: of an even count, the lower middle one.
    auto& median =
        root.add(Node::object("median", Layout::line,
                              r.ranks.size() % 2 == 0 ? "median of the ranks (lower middle)" : "median of the ranks"));
    median.add("allocated_bytes", Value::bytes(r.median.allocated_bytes), "allocated");
    median.add("reserved_bytes", Value::bytes(r.median.reserved_bytes), "reserved");
    median.add("active_bytes", Value::bytes(r.median.active_bytes)).machines_only();
    median.add("inactive_split_bytes", Value::bytes(r.median.inactive_split_bytes)).machines_only();
    auto& median_categories = median.add(Node::object("categories", Layout::hidden));
    for (std::size_t k = 0; k < analysis::category_count; ++k)
        if (r.median.category_bytes[k] != 0)
            median_categories.add(std::string(analysis::to_string(static_cast<analysis::Category>(k))),
                                  Value::bytes(r.median.category_bytes[k]));
    // The answer that decides whether any rank can stand out comes first.
    root.add("same_workload", Value::word(analysis::to_string(r.same_workload)), "same workload");
    auto& noise = root.add("noise_bytes", Value::bytes(r.noise_bytes), "a rank stands out beyond ±");
    if (r.same_workload != analysis::Answer::yes) noise.machines_only();
    // A rank that ran out of memory is the first thing to say of the ranks, before any level.
    analysis::Facts ooms;
    for (const auto& f : r.warnings)
        if (f.kind == analysis::FactKind::rank_ooms) ooms.push_back(f);
    root.add(facts("ooms", ooms, "Out of memory")).people_only();
    auto& ranks = root.add(Node::list("ranks", Layout::table, "Per rank"));
    ranks.primary = true;
    for (const auto& k : r.ranks) ranks.add(rank_row(k, r));
    auto& outliers = root.add(Node::list(
        "outliers", Layout::records,
        !r.outliers.empty()                       ? "Ranks that stand out"
        : r.same_workload == analysis::Answer::no ? "No rank is called an outlier: the ranks hold different sites"
        : r.same_workload == analysis::Answer::unknown
            ? "No rank is called an outlier: whether the ranks are replicas is not known"
            : "No rank stands out"));
    for (const auto& o : r.outliers) outliers.add(outlier_record(o, r.median_rank));
    auto& top = root.add(Node::list("top_sites_text", Layout::table, "Top sites per rank")).people_only();
    for (const auto& k : r.ranks)
        for (const auto& s : k.top_sites) {
            auto& row = top.add(Node::object("", Layout::facts));
            row.add("rank", Value::count(k.rank));
            row.add("bytes", Value::bytes(s.bytes));
            row.add("category", Value::word(analysis::to_string(s.category)));
            row.add("site", site(s.site));
        }
    root.add(facts("notes", r.notes, "Notes"));
    root.add(facts("warnings", r.warnings)).machines_only();
    return doc;
}

}  // namespace memsnap::report::doc
