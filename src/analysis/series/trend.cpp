#include "analysis/sites/relative_sites.hpp"
#include "series_origin.hpp"

#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stats_tables.hpp>
#include <memsnap/error.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/stats/keys.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

namespace memsnap::analysis {

namespace {

constexpr std::size_t kMaxTrendSitesListed = limits::trend_sites;
// A fit needs two intervals after warm-up to tell steady growth from one jump.
constexpr std::size_t kMinPoints = 3;
// A leak needs this many points after warm-up, or three where every site that carries the
// growth agrees.
constexpr std::size_t kLeakPoints = 4;
// A site carries the growth when it holds this share of the series' allocated growth or more.
constexpr double kCarriesShare = 0.05;

std::int64_t series_noise(const std::vector<std::int64_t>& bytes) {
    const auto top = bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
    return noise_threshold(ByteRange::exact(top));
}

// Steps of the captures, or their positions, and where they came from.
struct StepChoice {
    std::vector<std::int64_t> steps;
    std::vector<std::size_t> order;  // capture positions in the order judged
    std::string source;
    bool known = false;
};

bool all_distinct(const std::vector<std::optional<std::int64_t>>& v) {
    std::set<std::int64_t> seen;
    for (const auto& x : v)
        if (!x || !seen.insert(*x).second) return false;
    return true;
}

// --steps, else step words: a known order of steps. Without them, the positions as given.
StepChoice choose_steps(std::size_t n, const std::vector<std::optional<std::int64_t>>& found,
                        const std::string& found_source, const TrendOptions& trend) {
    StepChoice c;
    c.order.resize(n);
    std::iota(c.order.begin(), c.order.end(), std::size_t{0});
    if (!trend.steps.empty()) {
        if (trend.steps.size() != n)
            throw usage_error(fmt::format("--steps: {} steps for {} captures", trend.steps.size(), n));
        c.steps = trend.steps;
        c.source = "--steps";
        c.known = true;
        return c;
    }
    if (all_distinct(found)) {
        std::stable_sort(c.order.begin(), c.order.end(),
                         [&](std::size_t a, std::size_t b) { return *found[a] < *found[b]; });
        for (const auto i : c.order) c.steps.push_back(*found[i]);
        c.source = found_source;
        c.known = true;
        return c;
    }
    c.source = "order given";
    for (std::size_t i = 0; i < n; ++i) c.steps.push_back(static_cast<std::int64_t>(i));
    return c;
}

void require_points(std::size_t points, std::size_t warmup) {
    if (points < 2) throw input_error("trend needs two captures or more", "");
    if (points < warmup + kMinPoints)
        throw usage_error(fmt::format(
            "trend needs at least {} captures after --warmup {} to tell steady growth from a jump (got {}); for "
            "two captures use diff",
            kMinPoints, warmup, points));
}

std::vector<Comparability> pairs_of(const std::vector<SeriesCapture>& captures, const std::vector<std::size_t>& order,
                                    bool by_steps, std::optional<int> device) {
    std::vector<Comparability> out;
    for (std::size_t k = 0; k + 1 < order.size(); ++k)
        out.push_back(detail::compare_contents(captures[order[k]].info, captures[order[k + 1]].info, by_steps, device));
    return out;
}

// The order and comparability of a snapshot series: steps when the names or --steps give them;
// else the trace clock, but only of one process (every neighbouring pair shares events); else
// the order given, which is not an order to judge behaviour by.
StepChoice order_snapshots(const std::vector<SeriesCapture>& captures, const TrendOptions& trend,
                           std::optional<int> device, TrendResult& t) {
    std::vector<std::optional<std::int64_t>> found, times;
    for (const auto& c : captures) {
        found.push_back(util::step_from_file_name(c.file));
        times.push_back(c.info.trace_last_us);
    }
    auto choice = choose_steps(captures.size(), found, "file names", trend);
    std::vector<std::string> files;
    const auto names = [&](const std::vector<std::size_t>& order) {
        files.clear();
        for (const auto i : order) files.push_back(captures[i].file);
    };
    if (!choice.known && all_distinct(times)) {
        auto by_time = choice.order;
        std::stable_sort(by_time.begin(), by_time.end(),
                         [&](std::size_t a, std::size_t b) { return *times[a] < *times[b]; });
        const auto pairs = pairs_of(captures, by_time, false, device);
        names(by_time);
        if (detail::weakest(pairs, files).same_process == Answer::yes) {
            choice.order = by_time;
            choice.source = "trace time";
            choice.known = true;
            t.comparability = detail::weakest(pairs, files);
            return choice;
        }
    }
    names(choice.order);
    t.comparability = detail::weakest(pairs_of(captures, choice.order, choice.known, device), files);
    t.comparability.order_known = choice.known && t.comparability.order_known;
    if (!choice.known) t.comparability.order_evidence.push_back(Fact(FactKind::order_given));
    return choice;
}

TrendSeries series(std::string name, std::vector<std::int64_t> bytes, const TrendResult& t, std::int64_t noise,
                   const std::vector<std::int64_t>* blocks = nullptr) {
    TrendSeries s;
    s.name = std::move(name);
    s.bytes = std::move(bytes);
    if (blocks) s.blocks = *blocks;
    s.fit = fit_series(t.steps, s.bytes, blocks ? &s.blocks : nullptr, t.warmup, noise,
                       t.comparability.behaviour_allowed(), t.comparability.order_known);
    return s;
}

const TrendSeries* find_series(const std::vector<TrendSeries>& all, std::string_view name) {
    for (const auto& s : all)
        if (s.name == name) return &s;
    return nullptr;
}

// With three points, a leak only where every site that carries the growth agrees: else the
// totals and the sites that said leak say growth, and the evidence says which sites disagree.
void three_point_rule(TrendResult& t, std::size_t points) {
    if (points >= kLeakPoints) return;
    const auto* allocated = find_series(t.totals, "allocated_bytes");
    const std::int64_t growth = allocated ? allocated->bytes.back() - allocated->bytes[t.warmup] : 0;
    std::size_t carrying = 0, leaking = 0;
    std::map<Verdict, std::size_t> others;
    for (const auto& s : t.sites) {
        const std::int64_t grew = s.bytes_by_step.back() - s.bytes_by_step[t.warmup];
        if (growth <= 0 || static_cast<double>(grew) < kCarriesShare * static_cast<double>(growth)) continue;
        ++carrying;
        if (s.fit.verdict == Verdict::leak)
            ++leaking;
        else
            ++others[s.fit.verdict];
    }
    const bool agree = carrying > 0 && leaking == carrying;
    const bool any_leak = std::any_of(t.sites.begin(), t.sites.end(),
                                      [](const TrendSite& s) { return s.fit.verdict == Verdict::leak; }) ||
                          (allocated && allocated->fit.verdict == Verdict::leak);
    if (!any_leak) return;
    if (agree) {
        t.evidence.push_back(Fact(FactKind::sites_agree).count("sites", static_cast<std::int64_t>(carrying)));
        return;
    }
    for (auto* group : {&t.totals, &t.categories})
        for (auto& s : *group)
            if (s.fit.verdict == Verdict::leak) s.fit.verdict = Verdict::growth;
    for (auto& s : t.sites)
        if (s.fit.verdict == Verdict::leak) s.fit.verdict = Verdict::growth;
    t.evidence.push_back(Fact(FactKind::too_few_points)
                             .count("points", static_cast<std::int64_t>(points))
                             .count("needed", static_cast<std::int64_t>(kLeakPoints)));
    if (!others.empty()) {
        const auto most = std::max_element(others.begin(), others.end(),
                                           [](const auto& a, const auto& b) { return a.second < b.second; });
        t.evidence.push_back(Fact(FactKind::sites_disagree)
                                 .count("sites", static_cast<std::int64_t>(carrying))
                                 .text("verdict", std::string(to_string(most->first))));
    }
}

Fact fit_fact(const TrendSeries& s, bool steps_known, bool ordered, bool shape_judged) {
    const auto [low, high] = std::minmax_element(s.bytes.begin(), s.bytes.end());
    return Fact(FactKind::series_fit)
        .text("name", s.name)
        .bytes("first", s.bytes.front())
        .bytes("last", s.bytes.back())
        .bytes("lowest", *low)
        .bytes("highest", *high)
        .real("slope", s.fit.slope_bytes_per_step)
        .flag("per_step", steps_known)
        .real("r2", s.fit.r2)
        .flag("r2_defined", s.fit.r2_defined)
        .flag("ordered", ordered)
        .flag("shape_judged", shape_judged)
        .text("verdict", std::string(to_string(s.fit.verdict)));
}

// The overall verdict from the totals and the sites together; no line printed beside it
// contradicts it.
void judge(TrendResult& t) {
    std::vector<const TrendSite*> leaking;
    for (const auto& s : t.sites)
        if (s.fit.verdict == Verdict::leak) leaking.push_back(&s);
    const auto* allocated = find_series(t.totals, "allocated_bytes");
    const auto* reserved = find_series(t.totals, "reserved_bytes");
    const Verdict a = allocated ? allocated->fit.verdict : Verdict::stable;
    const Verdict r = reserved ? reserved->fit.verdict : Verdict::stable;
    if (!leaking.empty() || a == Verdict::leak) {
        t.verdict = Verdict::leak;
        for (const auto* s : leaking)
            t.evidence.push_back(Fact(FactKind::site_steady)
                                     .text("site", s->site.label())
                                     .real("slope", s->fit.slope_bytes_per_step)
                                     .flag("per_step", t.steps_known)
                                     .real("r2", s->fit.r2)
                                     .real("not_down", s->fit.monotonic_share));
    } else if (a == Verdict::stable && r == Verdict::differs) {
        t.verdict = Verdict::differs;  // in no known order, reserved spreads: no cache grew, either
    } else if (a == Verdict::stable && r == Verdict::shrink) {
        t.verdict = Verdict::shrink;  // the cache fell and live memory did not: nothing flat to call stable
    } else if ((a == Verdict::stable || a == Verdict::shrink) &&
               (r == Verdict::growth || r == Verdict::one_time_growth || r == Verdict::irregular ||
                r == Verdict::shape_growth || r == Verdict::leak)) {
        t.verdict = Verdict::cache_growth;
    } else {
        t.verdict = a;
    }
    for (const auto* s : {allocated, reserved})
        if (s)
            t.evidence.push_back(
                fit_fact(*s, t.steps_known, t.comparability.order_known, t.comparability.behaviour_allowed()));
    AdviceContext context;
    context.caveat = t.comparability.caveat();
    context.order_known = t.comparability.order_known;
    context.behaviour = t.comparability.behaviour_allowed();
    context.order_contradicted = t.comparability.order_contradicted();
    context.one_process_ruled_out = t.comparability.same_process == Answer::no;
    context.from_snapshots = t.kind == SeriesKind::snapshot;
    context.live_flat = allocated && a == Verdict::stable;  // a fit's stable: within its noise floor
    context.live_fell = allocated && a == Verdict::shrink;
    t.advice = advice_for(t.verdict, context);
}

// Growth that one early jump hides: where a fit after it would start.
void jump_note(TrendResult& t) {
    const auto* allocated = find_series(t.totals, "allocated_bytes");
    if (!allocated || t.verdict == Verdict::leak || t.verdict == Verdict::stable ||
        !t.comparability.behaviour_allowed())
        return;
    const auto& b = allocated->bytes;
    std::size_t jump = 0;
    for (std::size_t i = 1; i < b.size(); ++i)
        if (b[i] - b[i - 1] > b[jump + 1] - b[jump]) jump = i - 1;
    const std::size_t warmup = jump + 1;
    if (warmup > t.warmup && b.size() >= warmup + kLeakPoints &&
        fit_series(t.steps, b, nullptr, warmup, series_noise(b), true).verdict == Verdict::leak)
        t.notes.push_back(Fact(FactKind::jump_then_steady)
                              .count("at", t.steps[warmup])
                              .flag("per_step", t.steps_known)
                              .count("warmup", static_cast<std::int64_t>(warmup)));
}

void series_notes(TrendResult& t) {
    const auto& c = t.comparability;
    if (!c.behaviour_allowed())
        t.notes.push_back(Fact(FactKind::not_comparable)
                              .text("same_process", std::string(to_string(c.same_process)))
                              .text("same_workload", std::string(to_string(c.same_workload)))
                              .flag("summaries", t.kind != SeriesKind::snapshot));
    if (c.caveat())
        t.notes.push_back(Fact(FactKind::caveat_same_workload).flag("summaries", t.kind != SeriesKind::snapshot));
    // In no known order nothing is given per capture either: the header says the order is given.
    if (!t.steps_known && c.order_known)
        t.notes.push_back(Fact(FactKind::steps_unknown).text("source", t.steps_source));
    if (t.warmup > 0)
        t.notes.push_back(Fact(FactKind::warmup_left_out).count("intervals", static_cast<std::int64_t>(t.warmup)));
    if (c.same_process == Answer::no)
        for (const auto& f : c.process_evidence)
            if (f.kind == FactKind::devices_differ || f.kind == FactKind::roots_differ ||
                f.kind == FactKind::main_scripts_differ)
                t.warnings.push_back(f);
}

Diagnosis diagnose(const TrendSite& s, const TrendResult& t, std::int64_t distance) {
    // A cause is named only for a site with a stack, where behaviour can be judged.
    if (!s.has_stack || !t.comparability.behaviour_allowed()) return {};
    if (s.fit.verdict == Verdict::one_time_growth && !is_one_time(s.category)) {
        Diagnosis d;
        d.pattern = Pattern::one_time_growth;
        d.evidence.push_back(
            Fact(FactKind::one_interval).bytes("first", s.bytes_by_step.front()).bytes("last", s.bytes_by_step.back()));
        return d;
    }
    if (s.fit.verdict == Verdict::sawtooth) {
        Diagnosis d;
        d.pattern = Pattern::sawtooth;
        d.evidence.push_back(Fact(FactKind::up_and_down).real("not_down", s.fit.monotonic_share));
        return d;
    }
    SiteFacts f;
    f.verdict = s.fit.verdict;
    f.category = s.category;
    const auto n = s.bytes_by_step.size();
    f.before_blocks = s.blocks_by_step.front();
    f.after_blocks = s.blocks_by_step.back();
    f.delta_blocks = f.after_blocks - f.before_blocks;
    f.new_blocks = std::max<std::int64_t>(0, f.delta_blocks);
    f.delta_bytes = s.bytes_by_step[n - 1] - s.bytes_by_step[0];
    f.growth_bytes_per_step = s.fit.slope_bytes_per_step;
    f.steps_known = t.steps_known;
    f.step_distance = distance;
    if (s.site.user_code) f.user_frames.push_back({s.site.filename, s.site.line, s.site.name, true, true});
    return diagnose_site(f);
}

std::vector<TrendSite> sites_of(std::vector<SeriesCapture>& captures, const std::vector<std::size_t>& order) {
    const std::size_t n = order.size();
    // Sites by (path below the project root, line, function, category).
    std::map<detail::RelativeSite, TrendSite> sites;
    for (std::size_t pos = 0; pos < n; ++pos) {
        auto& info = captures[order[pos]].info;
        const std::string root = detail::project_root_of(info.top_sites);
        for (const auto& u : info.top_sites) {
            auto& s = sites[detail::relative_site(u, root)];
            if (s.bytes_by_step.empty()) {
                s.site = u.site;
                s.category = u.category;
                s.has_stack = u.has_stack;
                s.bytes_by_step.assign(n, 0);
                s.blocks_by_step.assign(n, 0);
            }
            const auto& file = captures[order[pos]].file;
            s.bytes_by_step[pos] =
                util::or_refuse(util::checked_add(s.bytes_by_step[pos], u.bytes), "a site's bytes", file);
            s.blocks_by_step[pos] =
                util::or_refuse(util::checked_add(s.blocks_by_step[pos], u.blocks), "a site's blocks", file);
        }
        info.top_sites.clear();  // the series need not hold them twice
    }
    std::vector<TrendSite> out;
    for (auto& [key, s] : sites) out.push_back(std::move(s));
    return out;
}

void list_sites(TrendResult& t, std::vector<TrendSite> all, const AnalysisOptions& options) {
    std::sort(all.begin(), all.end(), [](const TrendSite& a, const TrendSite& b) {
        if (a.fit.score != b.fit.score) return a.fit.score > b.fit.score;
        if (a.bytes_by_step.back() != b.bytes_by_step.back()) return a.bytes_by_step.back() > b.bytes_by_step.back();
        return a.site < b.site;
    });
    t.sites_total = all.size();
    const std::size_t limit = options.top == 0 ? kMaxTrendSitesListed : std::min(options.top, kMaxTrendSitesListed);
    // Leaks are listed whatever --top says: a report must not hide what its verdict rests on.
    for (auto& s : all)
        if (t.sites.size() < limit || s.fit.verdict == Verdict::leak) t.sites.push_back(std::move(s));
    for (std::size_t i = 0; i < t.sites.size(); ++i) t.sites[i].rank = i + 1;
}

void snapshot_totals(TrendResult& t, const std::vector<SeriesCapture>& captures,
                     const std::vector<std::size_t>& order) {
    const std::pair<const char*, std::int64_t MemoryTotals::*> totals[] = {
        {"allocated_bytes", &MemoryTotals::allocated_bytes},
        {"reserved_bytes", &MemoryTotals::reserved_bytes},
        {"active_bytes", &MemoryTotals::active_bytes},
        {"requested_bytes", &MemoryTotals::requested_bytes},
        {"inactive_split_bytes", &MemoryTotals::inactive_split_bytes}};
    for (const auto& [name, field] : totals) {
        std::vector<std::int64_t> bytes;
        for (const auto i : order) bytes.push_back(captures[i].info.totals.*field);
        const auto noise = series_noise(bytes);
        t.totals.push_back(series(name, std::move(bytes), t, noise));
    }
    for (std::size_t k = 0; k < category_count; ++k) {
        std::vector<std::int64_t> bytes, blocks;
        for (const auto i : order) {
            bytes.push_back(captures[i].info.categories[k].bytes);
            blocks.push_back(captures[i].info.categories[k].blocks);
        }
        if (std::all_of(bytes.begin(), bytes.end(), [](std::int64_t b) { return b == 0; })) continue;
        const auto noise = series_noise(bytes);
        t.categories.push_back(
            series(std::string(to_string(static_cast<Category>(k))), std::move(bytes), t, noise, &blocks));
    }
}

}  // namespace

TrendResult trend_snapshots(std::vector<SeriesCapture> captures, const AnalysisOptions& options,
                            const TrendOptions& trend) {
    TrendResult t;
    t.kind = SeriesKind::snapshot;
    t.device = options.device;
    t.warmup = trend.warmup;
    require_points(captures.size(), trend.warmup);
    const auto choice = order_snapshots(captures, trend, options.device, t);
    t.steps = choice.steps;
    t.steps_source = choice.source;
    t.steps_known = choice.known;
    for (std::size_t k = 0; k < choice.order.size(); ++k) {
        t.files.push_back(captures[choice.order[k]].file);
        t.points.push_back({k, t.steps[k]});
    }
    snapshot_totals(t, captures, choice.order);
    auto all = sites_of(captures, choice.order);
    const std::int64_t distance = t.steps.back() - t.steps[std::min(t.warmup, t.steps.size() - 1)];
    for (auto& s : all)
        s.fit = fit_series(t.steps, s.bytes_by_step, &s.blocks_by_step, t.warmup, 0,
                           t.comparability.behaviour_allowed() && s.has_stack, t.comparability.order_known);
    t.sites = std::move(all);  // every site, for the three-point rule
    three_point_rule(t, t.steps.size() - t.warmup);
    list_sites(t, std::exchange(t.sites, {}), options);
    for (auto& s : t.sites) s.diagnosis = diagnose(s, t, distance);
    judge(t);
    jump_note(t);
    series_notes(t);
    // Captures without stacks beside ones with: their memory has no site, so the sites and
    // categories of the others read as gone, and theirs as unknown. Said first.
    std::vector<std::string> bare;
    for (const auto i : choice.order)
        if (captures[i].info.blocks_with_frames == 0) bare.push_back(captures[i].file);
    if (!bare.empty() && bare.size() < choice.order.size())
        t.notes.insert(t.notes.begin(), Fact(FactKind::stacks_some_captures)
                                            .count("captures", static_cast<std::int64_t>(bare.size()))
                                            .count("of", static_cast<std::int64_t>(choice.order.size()))
                                            .text("files", fmt::format("{}", fmt::join(bare, ", "))));
    return t;
}

const std::array<std::pair<const char*, const char*>, SummarySeriesFile::total_count>& SummarySeriesFile::total_keys() {
    static const std::array<std::pair<const char*, const char*>, total_count> keys = {{
        {"allocated_bytes", stats::keys::allocated_current},
        {"reserved_bytes", stats::keys::reserved_current},
        {"active_bytes", stats::keys::active_current},
        {"requested_bytes", stats::keys::requested_current},
        {"inactive_split_bytes", stats::keys::non_releasable_current},
    }};
    return keys;
}

void SummarySeriesFile::add(const stats::StatsTable& table) {
    Table out;
    out.step = table.step;
    out.device = table.device;
    out.generation = static_cast<std::uint8_t>(table.layout.generation);
    out.cuda_malloc_async = table.layout.cuda_malloc_async;
    for (std::size_t k = 0; k < total_count; ++k)
        if (const auto* value = stats::tracked_value(table, total_keys()[k].second)) {
            out.totals[k] = *value;
            out.totals_present |= static_cast<std::uint8_t>(1u << k);
        }
    out.first_counter = static_cast<std::uint32_t>(counters_.size());
    for (const auto& [key, range] : table.stats) {  // in key order, as the table's map
        if (!(key.ends_with(".allocated") || key.ends_with(".freed"))) continue;
        auto id = key_ids_.find(key);
        if (id == key_ids_.end()) {
            id = key_ids_.emplace(std::string(key), static_cast<std::uint32_t>(keys_.size())).first;
            keys_.emplace_back(key);
        }
        counters_.push_back({id->second, range});
    }
    out.counter_count = static_cast<std::uint32_t>(counters_.size() - out.first_counter);
    for (const auto& w : table.warnings) warnings_.emplace_back(static_cast<std::uint32_t>(tables_.size()), w);
    tables_.push_back(out);
}

namespace {

// A point of a stats series: which file, which of its tables.
struct StatsPoint {
    std::uint32_t file = 0, table = 0;
};

struct StatsPoints {
    std::vector<StatsPoint> points;
    bool one_table_per_file = true;
    const SummarySeriesFile::Table& table(const std::vector<SummarySeriesFile>& files, std::size_t i) const {
        return files[points[i].file].tables()[points[i].table];
    }
};

// The tables of `device` (tables without a device stay); none left in a file is an error
// naming the devices it holds, as for a diff.
StatsPoints points_of(const std::vector<SummarySeriesFile>& files, std::optional<int> device) {
    StatsPoints p;
    std::size_t total = 0;
    for (const auto& f : files) total += f.tables().size();
    // A log may hold hundreds of thousands of tables: sized once, never grown.
    p.points.reserve(total);
    for (std::size_t f = 0; f < files.size(); ++f) {
        std::size_t kept = 0;
        std::set<int> devices;
        const auto& tables = files[f].tables();
        for (std::size_t k = 0; k < tables.size(); ++k) {
            if (tables[k].device) devices.insert(*tables[k].device);
            if (device && tables[k].device && *tables[k].device != *device) continue;
            p.points.push_back({static_cast<std::uint32_t>(f), static_cast<std::uint32_t>(k)});
            ++kept;
        }
        if (kept == 0)
            throw input_error(fmt::format("--device {}: the tables are of device{} {} only", *device,
                                          devices.size() == 1 ? "" : "s", fmt::join(devices, ", ")),
                              files[f].file());
        if (kept != 1) p.one_table_per_file = false;
    }
    return p;
}

// The counter of `key` in a table, if it has one (its counters are in key order).
const ByteRange* counter_of(const SummarySeriesFile& file, const SummarySeriesFile::Table& table,
                            std::string_view key) {
    const auto begin = file.counters().begin() + table.first_counter;
    const auto end = begin + table.counter_count;
    const auto at = std::lower_bound(begin, end, key, [&](const SummarySeriesFile::Counter& c, std::string_view k) {
        return file.counter_key(c.key) < k;
    });
    return at != end && file.counter_key(at->key) == key ? &at->range : nullptr;
}

// Cumulative counters that fall between neighbouring tables: not one process.
void stats_comparability(TrendResult& t, const std::vector<SummarySeriesFile>& files, const StatsPoints& p,
                         const std::vector<std::size_t>& order) {
    ProcessEvidence e;
    for (std::size_t k = 0; k + 1 < order.size(); ++k) {
        const auto& fa = files[p.points[order[k]].file];
        const auto& fb = files[p.points[order[k + 1]].file];
        const auto& a = p.table(files, order[k]);
        const auto& b = p.table(files, order[k + 1]);
        using Generation = stats::TableLayout::Generation;
        if (!e.versions_differ)
            e.versions_differ =
                versions_differ(static_cast<Generation>(a.generation), static_cast<Generation>(b.generation));
        if (!e.setting_differs) e.setting_differs = backend_differs(a.cuda_malloc_async, b.cuda_malloc_async);
        for (std::uint32_t c = 0; c < a.counter_count && !e.counter_falls; ++c) {
            const auto& counter = fa.counters()[a.first_counter + c];
            const auto key = fa.counter_key(counter.key);
            const auto* after = counter_of(fb, b, key);
            if (!after) continue;
            const ByteRange before = counter.range;
            if (after->high < before.low)
                e.counter_falls = Fact(FactKind::counter_falls)
                                      .text("metric", std::string(key))
                                      .range("before", before, stats::is_byte_metric(key))
                                      .range("after", *after, stats::is_byte_metric(key));
            else if (after->low > before.high)
                e.counters_grow = true;
        }
    }
    judge_process(e, t.comparability);
    if (files.size() == 1 || t.comparability.same_process == Answer::yes) {
        WorkloadEvidence w;
        w.one_log = files.size() == 1;
        judge_workload(w, t.comparability);
    } else {  // as in a summary diff: tables name no sites to compare
        t.comparability.same_workload = Answer::unknown;
        t.comparability.workload_evidence = {Fact(FactKind::summaries_no_sites)};
    }
    // One log's tables are in the order written; a counter that runs backwards contradicts it.
    t.comparability.order_known = (t.steps_known || files.size() == 1) && t.comparability.order_known;
}

void stats_totals(TrendResult& t, const std::vector<SummarySeriesFile>& files, const StatsPoints& p,
                  const std::vector<std::size_t>& order) {
    for (std::size_t m = 0; m < SummarySeriesFile::total_count; ++m) {
        std::vector<std::int64_t> bytes;
        std::int64_t widest = 0;
        bool complete = true;
        for (const auto i : order) {
            const auto& table = p.table(files, i);
            if (!(table.totals_present & (1u << m))) {
                complete = false;
                break;
            }
            const ByteRange r = table.totals[m];
            bytes.push_back(r.low + (r.high - r.low) / 2);
            widest = std::max(widest, r.high - r.low);
        }
        if (!complete) continue;
        // A change within the tables' rounding is no change.
        const auto noise = std::max(series_noise(bytes), widest);
        t.totals.push_back(series(SummarySeriesFile::total_keys()[m].first, std::move(bytes), t, noise));
    }
}

}  // namespace

std::string_view to_string(SeriesKind kind) {
    switch (kind) {
        case SeriesKind::snapshot:
            return "snapshot";
        case SeriesKind::memory_summary:
            return "memory_summary";
        case SeriesKind::memory_stats:
            return "memory_stats";
    }
    return "snapshot";
}

TrendResult trend_stats(const std::vector<SummarySeriesFile>& files, const AnalysisOptions& options,
                        const TrendOptions& trend) {
    TrendResult t;
    t.kind = !files.empty() && files.front().kind() == stats::CaptureKind::memory_stats ? SeriesKind::memory_stats
                                                                                        : SeriesKind::memory_summary;
    t.warmup = trend.warmup;
    // One device: --device, else the first any table names.
    std::optional<int> device = options.device;
    for (std::size_t f = 0; f < files.size() && !device; ++f)
        for (const auto& table : files[f].tables())
            if (table.device && !device) device = table.device;
    t.device = device;
    const auto p = points_of(files, device);
    for (const auto& f : files) t.files.push_back(f.file());
    require_points(p.points.size(), trend.warmup);
    std::vector<std::optional<std::int64_t>> found;
    found.reserve(p.points.size());
    for (std::size_t i = 0; i < p.points.size(); ++i) found.push_back(p.table(files, i).step);
    std::string source = "log lines";
    if (std::any_of(found.begin(), found.end(), [](const auto& s) { return !s.has_value(); }) && p.one_table_per_file) {
        for (std::size_t i = 0; i < p.points.size(); ++i)
            found[i] = util::step_from_file_name(files[p.points[i].file].file());
        source = "file names";
    }
    const auto choice = choose_steps(p.points.size(), found, source, trend);
    found = {};
    t.steps = choice.steps;
    t.steps_source = choice.source;
    t.steps_known = choice.known;
    if (p.one_table_per_file) {
        t.files.clear();
        for (const auto i : choice.order) t.files.push_back(files[p.points[i].file].file());
    }
    t.points.reserve(choice.order.size());
    for (std::size_t k = 0; k < choice.order.size(); ++k)
        t.points.push_back({p.one_table_per_file ? k : p.points[choice.order[k]].file, t.steps[k]});
    stats_comparability(t, files, p, choice.order);
    stats_totals(t, files, p, choice.order);
    if (t.totals.empty())
        throw input_error("no table holds allocated or reserved memory in every capture of the series",
                          t.files.front());
    three_point_rule(t, t.steps.size() - t.warmup);
    judge(t);
    series_notes(t);
    t.notes.push_back(Fact(FactKind::summary_midpoints).flag("fitted", t.comparability.order_known));
    // The warnings of the tables judged (of the device shown).
    for (const auto& f : files)
        for (const auto& [table, text] : f.warnings())
            if (!device || !f.tables()[table].device || *f.tables()[table].device == *device)
                t.warnings.push_back(Fact(FactKind::reader_warning).text("file", f.file()).text("text", text));
    return t;
}

TrendResult trend_stats(const std::vector<stats::StatsCapture>& captures, const AnalysisOptions& options,
                        const TrendOptions& trend) {
    std::vector<SummarySeriesFile> files;
    for (const auto& c : captures) {
        auto& f = files.emplace_back(c.file);
        f.set_kind(c.kind);
        for (const auto& table : c.tables) f.add(table);
    }
    return trend_stats(files, options, trend);
}

StackProfile trend_stacks(const TrendResult& trend) {
    StackProfile out;
    out.subject = {ProfileSubject::Kind::trend_sites, {}, {}, 0, trend.steps.size()};
    out.measure = "bytes";
    out.differential = true;
    const std::size_t first = std::min(trend.warmup, trend.steps.empty() ? 0 : trend.steps.size() - 1);
    for (const auto& s : trend.sites) {
        ProfileSample sample;
        sample.frames.push_back(static_cast<std::uint32_t>(out.frame_table.size()));
        out.frame_table.push_back({s.site.filename, s.site.line, s.site.name, true, s.site.user_code});
        sample.category = s.category;
        sample.base_bytes = s.bytes_by_step[first];
        sample.base_count = s.blocks_by_step[first];
        sample.bytes = s.bytes_by_step.back();
        sample.count = s.blocks_by_step.back();
        out.samples.push_back(std::move(sample));
    }
    return out;
}

}  // namespace memsnap::analysis
