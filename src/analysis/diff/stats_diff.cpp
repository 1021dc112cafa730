#include <memsnap/analysis/diff/stats_diff.hpp>
#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/error.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/stats/keys.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <set>

namespace memsnap::analysis {

namespace {

constexpr std::array<const char*, 5> kTrendMetrics = {stats::keys::allocated_current, stats::keys::reserved_current,
                                                      stats::keys::active_current, stats::keys::requested_current,
                                                      stats::keys::non_releasable_current};

// The rows a verdict uses: when a table lacks one, the report names it.
constexpr std::array<const char*, 4> kVerdictMetrics = {stats::keys::allocated_current, stats::keys::reserved_current,
                                                        stats::keys::non_releasable_current,
                                                        stats::keys::allocations_current};

int severity(Verdict v) {
    switch (v) {
        case Verdict::leak:
            return 7;
        case Verdict::growth:
            return 6;
        case Verdict::shape_growth:
            return 5;
        case Verdict::one_time_growth:
            return 4;
        case Verdict::fragmentation:
            return 3;
        case Verdict::cache_growth:
            return 2;
        case Verdict::shrink:
            return 1;
        default:
            return 0;
    }
}

// A table's values including the scalar fields, keyed like memory_stats.
std::map<std::string, ByteRange> values_of(const stats::StatsTable& t) {
    std::map<std::string, ByteRange> out;
    for (const auto& [key, range] : t.stats)
        if (stats::tracked_value(t, key)) out.emplace(key, range);
    for (const char* counter : {stats::keys::num_ooms, stats::keys::num_alloc_retries})
        if (const auto* value = stats::tracked_value(t, counter)) out[counter] = *value;
    return out;
}

bool same_tables(const stats::StatsCapture& a, const stats::StatsCapture& b) {
    if (&a == &b) return true;
    if (a.kind != b.kind || a.tables.size() != b.tables.size()) return false;
    for (std::size_t i = 0; i < a.tables.size(); ++i) {
        const auto& x = a.tables[i];
        const auto& y = b.tables[i];
        if (x.line != y.line || x.device != y.device || x.stats != y.stats || x.num_ooms != y.num_ooms ||
            x.num_alloc_retries != y.num_alloc_retries)
            return false;
    }
    return true;
}

struct Entry {
    const stats::StatsTable* table;
    const char* source;
};

using Groups = std::map<std::optional<int>, std::vector<const stats::StatsTable*>>;

Groups by_device(const std::vector<const stats::StatsTable*>& tables) {
    Groups g;
    for (const auto* t : tables) g[t->device].push_back(t);
    return g;
}

// A long series (a log with a table every step) is listed at up to kMaxPoints evenly spaced
// points, first and last included; directions and slopes are judged on every point.
constexpr std::size_t kMaxPoints = limits::series_points;

std::vector<std::size_t> listed_points(std::size_t n) {
    std::vector<std::size_t> out;
    const std::size_t m = std::min(n, kMaxPoints);
    out.reserve(m);
    for (std::size_t k = 0; k < m; ++k) out.push_back(m == n ? k : k * (n - 1) / (m - 1));
    return out;
}

// The trend of one metric over the series, or none when a table lacks it.
std::optional<MetricTrend> make_trend(const std::vector<Entry>& series, const char* key,
                                      const std::vector<std::size_t>& listed, std::optional<std::int64_t> step_span) {
    MetricTrend t;
    t.values.reserve(listed.size());
    int up = 0, down = 0;
    std::optional<ByteRange> first, previous;
    std::size_t next_listed = 0;
    for (std::size_t i = 0; i < series.size(); ++i) {
        const auto* tracked = stats::tracked_value(*series[i].table, key);
        if (!tracked) return std::nullopt;
        const ByteRange value = *tracked;
        if (previous) {
            // A move counts past the noise floor only, as the pair's verdict reads it: a rise
            // within the floor is flat, not "rising" beside a "flat" evidence line.
            const auto d = range_delta(*previous, value);
            const std::int64_t floor = stats::is_byte_metric(key)
                                           ? noise_threshold(ByteRange{std::max(previous->low, value.low),
                                                                       std::max(previous->high, value.high)})
                                           : 0;
            if (d.low > floor)
                ++up;
            else if (d.high < -floor)
                ++down;
        }
        if (!first) first = value;
        previous = value;
        if (next_listed < listed.size() && listed[next_listed] == i) {
            t.values.push_back(value);
            ++next_listed;
        }
    }
    t.first_to_last = range_delta(*first, *previous);
    const int steps = static_cast<int>(series.size()) - 1;
    if (up && down)
        t.direction = Direction::mixed;
    else if (up)
        t.direction = up == steps ? Direction::rising : Direction::non_decreasing;
    else if (down)
        t.direction = down == steps ? Direction::falling : Direction::non_increasing;
    else
        t.direction = Direction::flat;
    t.monotone = t.direction != Direction::mixed;
    if (step_span) {
        t.slope = range_divide(t.first_to_last, *step_span);
        t.slope_unit = SlopeUnit::per_step;
    } else {
        t.slope = range_divide(t.first_to_last, std::max(steps, 1));
        t.slope_unit = SlopeUnit::per_capture;
    }
    return t;
}

std::vector<SeriesPoint> series_points(const std::vector<Entry>& series, const std::vector<std::size_t>& listed,
                                       const util::Steps& steps, Facts& notes) {
    std::vector<SeriesPoint> out;
    const auto n = series.size();
    out.reserve(listed.size());
    for (const std::size_t i : listed) {
        SeriesPoint p{i, series[i].source, series[i].table->line, std::nullopt};
        if (steps.source == "log lines") {
            p.step = series[i].table->step;
        } else if (steps.span) {
            const auto span = steps.distance();
            if (n == 1)
                p.step = steps.span->first;
            else if (span % static_cast<std::int64_t>(n - 1) == 0)
                p.step = steps.span->first + span / static_cast<std::int64_t>(n - 1) * static_cast<std::int64_t>(i);
            else if (i == 0)
                p.step = steps.span->first;
            else if (i + 1 == n)
                p.step = steps.span->second;
        }
        out.push_back(p);
    }
    for (const auto& e : series)
        for (const auto& w : e.table->warnings)
            notes.push_back(Fact(FactKind::reader_warning).text("file", e.source).text("text", w));
    if (n == 1) notes.push_back(Fact(FactKind::one_table));
    if (listed.size() < n)
        notes.push_back(Fact(FactKind::series_listed)
                            .count("tables", static_cast<std::int64_t>(n))
                            .count("listed", static_cast<std::int64_t>(listed.size())));
    return out;
}

void diff_metrics(const std::vector<Entry>& series, const std::vector<std::size_t>& listed, const util::Steps& steps,
                  DeviceDiff& out) {
    const auto first = values_of(*series.front().table);
    const auto last = values_of(*series.back().table);
    std::size_t only_before = 0, only_after = 0;
    for (const auto& [key, before] : first) {
        const auto it = last.find(key);
        if (it == last.end()) {
            ++only_before;
            continue;
        }
        MetricDiff m{before, it->second, range_delta(before, it->second), std::nullopt};
        // One table compared with itself: the same measurement, so the change is exactly 0
        // (interval arithmetic alone would widen it to ±(high − low)).
        if (series.size() == 1) m.delta = ByteRange{0, 0};
        // A high-water mark has no rate: it moves once, at a higher peak.
        if (steps.known() && !key.ends_with(".peak")) m.per_step = range_divide(m.delta, steps.distance());
        out.metrics.emplace(key, m);
    }
    for (const auto& [key, value] : last)
        if (!first.count(key)) ++only_after;
    if (only_before || only_after)
        out.notes.push_back(Fact(FactKind::metrics_one_sided)
                                .count("before_only", static_cast<std::int64_t>(only_before))
                                .count("after_only", static_cast<std::int64_t>(only_after)));
    for (const char* key : kVerdictMetrics)
        if (!out.metrics.count(key)) out.missing.emplace_back(key);
    if (!out.missing.empty())
        out.notes.push_back(
            Fact(FactKind::metrics_missing).text("list", fmt::format("{}", fmt::join(out.missing, ", "))));
    std::optional<std::int64_t> span;
    if (steps.known()) span = steps.distance();
    for (const char* key : kTrendMetrics)
        if (auto trend = make_trend(series, key, listed, span)) out.trends.emplace(key, std::move(*trend));
}

std::optional<MetricChange> change_of(const DeviceDiff& d, const char* key) {
    const auto it = d.metrics.find(key);
    if (it == d.metrics.end()) return std::nullopt;
    return MetricChange{it->second.before, it->second.delta};
}

// The totals read and judged under the captures' comparability: summaries carry no sites, so
// behaviour is judged only where one workload is known (one log).
void judge(DeviceDiff& d, const Comparability& comparability) {
    TotalsInput in;
    in.allocated = change_of(d, stats::keys::allocated_current);
    in.reserved = change_of(d, stats::keys::reserved_current);
    in.non_releasable = change_of(d, stats::keys::non_releasable_current);
    in.live_blocks = change_of(d, stats::keys::allocations_current);
    if (const auto it = d.metrics.find(stats::keys::num_ooms); it != d.metrics.end()) in.ooms_delta = it->second.delta;
    if (const auto it = d.metrics.find(stats::keys::num_alloc_retries); it != d.metrics.end())
        in.retries_delta = it->second.delta;
    const auto reading = read_totals(in);
    PairReading pair;
    pair.totals = &reading;
    if (in.allocated) pair.allocated_threshold = noise_threshold(in.allocated->before);
    if (in.reserved) pair.reserved_threshold = noise_threshold(in.reserved->before);
    pair.comparability = &comparability;
    auto judged = judge_pair(pair);
    d.verdict = judged.verdict;
    d.evidence = reading.evidence;
    for (auto& f : judged.evidence) d.evidence.push_back(std::move(f));
    // Cache that grows while live memory does not is what a higher peak reserved: the peak row
    // says whether one came between the tables (or since the last reset of the peak).
    const auto peak = d.metrics.find(stats::keys::allocated_peak);
    const bool cache_grew = d.verdict == Verdict::cache_growth || d.verdict == Verdict::fragmentation;
    if (cache_grew && peak != d.metrics.end() && peak->second.delta.low > noise_threshold(peak->second.before))
        d.evidence.push_back(Fact(FactKind::peak_rose)
                                 .range("before", peak->second.before, true)
                                 .range("after", peak->second.after, true)
                                 .range("delta", peak->second.delta, true));
    AdviceContext context;
    context.caveat = comparability.caveat();
    context.order_known = comparability.order_known;
    context.behaviour = comparability.behaviour_allowed();
    context.order_contradicted = comparability.order_contradicted();
    context.one_process_ruled_out = comparability.same_process == Answer::no;
    context.new_ooms = reading.new_ooms;
    context.new_retries = reading.new_retries;
    context.read_live_change(reading);
    d.advice = advice_for(d.verdict, context);
}

// Cumulative counters (Tot Alloc / Tot Freed, retries, OOMs) never go down in one process.
void check_counters(const DeviceDiff& d, ProcessEvidence& e) {
    for (const auto& [key, m] : d.metrics) {
        const bool cumulative = key.ends_with(".allocated") || key.ends_with(".freed") ||
                                key == stats::keys::num_alloc_retries || key == stats::keys::num_ooms;
        if (!cumulative) continue;
        if (m.delta.high < 0 && !e.counter_falls)
            e.counter_falls = Fact(FactKind::counter_falls)
                                  .text("metric", key)
                                  .range("before", m.before, stats::is_byte_metric(key))
                                  .range("after", m.after, stats::is_byte_metric(key));
        if (m.delta.low > 0) e.counters_grow = true;
    }
}

DeviceDiff diff_series(std::optional<int> device, const std::vector<Entry>& series, const util::Steps& steps) {
    DeviceDiff out;
    out.device = device;
    const auto listed = listed_points(series.size());
    out.series = series_points(series, listed, steps, out.notes);
    diff_metrics(series, listed, steps, out);
    return out;
}

}  // namespace

std::string_view to_string(Direction direction) {
    static constexpr std::array<std::string_view, 6> kSpelling = {"rising",         "non-decreasing", "flat",
                                                                  "non-increasing", "falling",        "mixed"};
    return kSpelling[static_cast<std::size_t>(direction)];
}

std::string_view to_string(SlopeUnit unit) { return unit == SlopeUnit::per_step ? "per_step" : "per_capture"; }

const DeviceDiff& StatsDiff::primary() const {
    const DeviceDiff* best = &devices.front();
    for (const auto& d : devices)
        if (severity(d.verdict) > severity(best->verdict)) best = &d;
    return *best;
}

namespace {

using Pairs = std::vector<std::pair<std::optional<int>, std::optional<int>>>;

// Tables pair by device; one device on each side pairs whatever their ids.
Pairs pair_devices(const Groups& b, const Groups& a, std::optional<Fact>& note) {
    Pairs pairs;
    for (const auto& [dev, tables] : b)
        if (a.count(dev)) pairs.emplace_back(dev, dev);
    if (pairs.empty() && b.size() == 1 && a.size() == 1) {
        pairs.emplace_back(b.begin()->first, a.begin()->first);
        note = Fact(FactKind::devices_paired)
                   .text("before", util::device_name(b.begin()->first))
                   .text("after", util::device_name(a.begin()->first));
    }
    if (pairs.empty()) throw input_error("no device appears in both captures");
    return pairs;
}

}  // namespace

StatsDiff diff_stats(const stats::StatsCapture& before_all, const stats::StatsCapture& after_all,
                     const AnalysisOptions& options) {
    const bool one_series = same_tables(before_all, after_all);
    const auto before = tables_of(before_all, options.device);
    const auto after = one_series ? before : tables_of(after_all, options.device);
    StatsDiff diff;
    diff.before_file = before_all.file;
    diff.after_file = after_all.file;
    diff.before_kind = before_all.kind;
    diff.after_kind = after_all.kind;
    diff.steps = options.steps;
    // A log diffed with itself takes the steps its log lines name, as trend does.
    if (!diff.steps.known() && one_series && before.size() > 1 && before.front()->step && before.back()->step &&
        *before.front()->step < *before.back()->step) {
        diff.steps.span = std::pair{*before.front()->step, *before.back()->step};
        diff.steps.source = "log lines";
    }
    diff.device_sets = {known_devices(before), known_devices(after)};
    const auto b = by_device(before);
    const auto a = by_device(after);
    std::optional<Fact> pairing;
    const auto pairs = pair_devices(b, a, pairing);
    ProcessEvidence evidence;
    for (const auto& [bd, ad] : pairs) {
        std::vector<Entry> series;
        for (const auto* t : b.at(bd)) series.push_back({t, "before"});
        if (!one_series)
            for (const auto* t : a.at(ad)) series.push_back({t, "after"});
        auto d = diff_series(bd ? bd : ad, series, diff.steps);
        if (pairing) d.notes.insert(d.notes.begin(), *pairing);
        check_counters(d, evidence);
        diff.devices.push_back(std::move(d));
    }
    if (pairing) {
        evidence.devices_differ = Fact(FactKind::devices_differ)
                                      .text("before", pairing->word("before"))
                                      .text("after", pairing->word("after"));
        diff.warnings.push_back(*evidence.devices_differ);
    }
    // The allocator backend is chosen when a process starts: tables of two backends are two runs.
    const auto async = [](const stats::StatsCapture& c) {
        return std::any_of(c.tables.begin(), c.tables.end(), [](const auto& t) { return t.layout.cuda_malloc_async; });
    };
    // The torch version a file's tables tell, if they tell one (a file of several says nothing alone).
    const auto generation = [](const stats::StatsCapture& c) {
        std::optional<stats::TableLayout::Generation> out;
        for (const auto& t : c.tables) {
            if (!t.layout.tells_torch_version()) continue;
            if (out && *out != t.layout.generation) return stats::TableLayout::Generation::unknown;
            out = t.layout.generation;
        }
        return out.value_or(stats::TableLayout::Generation::unknown);
    };
    if (!one_series) {
        evidence.setting_differs = backend_differs(async(before_all), async(after_all));
        evidence.versions_differ = versions_differ(generation(before_all), generation(after_all));
    }
    judge_process(evidence, diff.comparability);
    if (one_series || diff.comparability.same_process == Answer::yes) {
        WorkloadEvidence workload;
        workload.one_log = one_series;
        judge_workload(workload, diff.comparability);
    } else {
        diff.comparability.same_workload = Answer::unknown;
        diff.comparability.workload_evidence = {Fact(FactKind::summaries_no_sites)};
    }
    for (auto& d : diff.devices) judge(d, diff.comparability);
    for (const auto& [dev, tables] : b)
        if (!a.count(dev) && !pairing)
            diff.devices.front().notes.push_back(
                Fact(FactKind::device_one_side).text("device", util::device_name(dev)).text("side", "before"));
    for (const auto& [dev, tables] : a)
        if (!b.count(dev) && !pairing)
            diff.devices.front().notes.push_back(
                Fact(FactKind::device_one_side).text("device", util::device_name(dev)).text("side", "after"));
    return diff;
}

}  // namespace memsnap::analysis
