#include <memsnap/analysis/stats_diff.hpp>
#include <memsnap/util/units.hpp>

#include <memsnap/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace memsnap::analysis {

namespace {

__extension__ using Wide = __int128;

constexpr std::array<const char*, 5> kTrendMetrics = {
    "allocated_bytes.all.current", "reserved_bytes.all.current", "active_bytes.all.current",
    "requested_bytes.all.current", "inactive_split_bytes.all.current"};

int severity(Verdict v) {
    switch (v) {
        case Verdict::leak: return 4;
        case Verdict::fragmentation: return 3;
        case Verdict::cache_growth: return 2;
        case Verdict::shrink: return 1;
        case Verdict::stable: return 0;
    }
    return 0;
}

// A table's values including the scalar fields, keyed like memory_stats.
std::map<std::string, ByteRange> values_of(const stats::StatsTable& t) {
    auto out = t.stats;
    if (t.num_ooms) out["num_ooms"] = *t.num_ooms;
    if (t.num_alloc_retries) out["num_alloc_retries"] = *t.num_alloc_retries;
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

Groups by_device(const stats::StatsCapture& c) {
    Groups g;
    for (const auto& t : c.tables) g[t.device].push_back(&t);
    return g;
}

std::string device_name(std::optional<int> d) { return d ? fmt::format("device {}", *d) : "device unknown"; }

MetricTrend make_trend(const std::vector<ByteRange>& values, std::optional<std::int64_t> step_span) {
    MetricTrend t;
    t.values = values;
    t.first_to_last = range_delta(values.front(), values.back());
    int up = 0, down = 0;
    for (std::size_t i = 1; i < values.size(); ++i) {
        const auto d = range_delta(values[i - 1], values[i]);
        if (d.low > 0) ++up;
        else if (d.high < 0) ++down;
    }
    const int steps = static_cast<int>(values.size()) - 1;
    if (up && down) t.direction = "mixed";
    else if (up) t.direction = up == steps ? "rising" : "non-decreasing";
    else if (down) t.direction = down == steps ? "falling" : "non-increasing";
    else t.direction = "flat";
    t.monotone = t.direction != "mixed";
    if (step_span) {
        t.slope = range_divide(t.first_to_last, *step_span);
        t.slope_unit = "per_step";
    } else {
        t.slope = range_divide(t.first_to_last, std::max(steps, 1));
        t.slope_unit = "per_capture";
    }
    return t;
}

DeviceDiff diff_series(std::optional<int> device, const std::vector<Entry>& series,
                       std::optional<std::pair<std::int64_t, std::int64_t>> steps) {
    DeviceDiff out;
    out.device = device;
    const auto n = series.size();
    for (std::size_t i = 0; i < n; ++i) {
        SeriesPoint p{i, series[i].source, series[i].table->line, std::nullopt};
        if (steps) {
            const auto span = steps->second - steps->first;
            if (n == 1) p.step = steps->first;
            else if (span % static_cast<std::int64_t>(n - 1) == 0)
                p.step = steps->first + span / static_cast<std::int64_t>(n - 1) * static_cast<std::int64_t>(i);
            else if (i == 0) p.step = steps->first;
            else if (i + 1 == n) p.step = steps->second;
        }
        out.series.push_back(p);
        for (const auto& w : series[i].table->warnings) out.notes.push_back(fmt::format("{}: {}", series[i].source, w));
    }
    if (n == 1) out.notes.push_back("only one table for this device: before and after are the same table");

    const auto first = values_of(*series.front().table);
    const auto last = values_of(*series.back().table);
    std::optional<std::int64_t> span;
    if (steps) span = steps->second - steps->first;
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
        if (n == 1) m.delta = ByteRange{0, 0};
        if (span && *span > 0) m.per_step = range_divide(m.delta, *span);
        out.metrics.emplace(key, m);
    }
    for (const auto& [key, value] : last)
        if (!first.count(key)) ++only_after;
    if (only_before || only_after)
        out.notes.push_back(fmt::format("{} metric(s) only in the first table and {} only in the last are not compared",
                                        only_before, only_after));

    for (const char* key : kTrendMetrics) {
        std::vector<ByteRange> values;
        for (const auto& e : series) {
            const auto it = e.table->stats.find(key);
            if (it == e.table->stats.end()) break;
            values.push_back(it->second);
        }
        if (values.size() == n) out.trends.emplace(key, make_trend(values, span));
    }

    auto need = [&](const char* key) -> const MetricDiff& {
        const auto it = out.metrics.find(key);
        if (it == out.metrics.end())
            throw input_error(fmt::format("cannot compare {}: {} is missing in the first or last table (line {} / {})",
                                          device_name(device), key, series.front().table->line,
                                          series.back().table->line));
        return it->second;
    };
    VerdictInput in;
    const auto& alloc = need("allocated_bytes.all.current");
    const auto& reserved = need("reserved_bytes.all.current");
    in.allocated_before = alloc.before;
    in.allocated_delta = alloc.delta;
    in.reserved_before = reserved.before;
    in.reserved_delta = reserved.delta;
    if (auto it = out.metrics.find("inactive_split_bytes.all.current"); it != out.metrics.end()) {
        in.inactive_split_before = it->second.before;
        in.inactive_split_delta = it->second.delta;
    }
    if (auto it = out.metrics.find("num_ooms"); it != out.metrics.end()) in.ooms_delta = it->second.delta;
    if (auto it = out.metrics.find("num_alloc_retries"); it != out.metrics.end()) in.retries_delta = it->second.delta;
    out.verdict = classify(in);
    return out;
}

}  // namespace

const DeviceDiff& StatsDiff::primary() const {
    const DeviceDiff* best = &devices.front();
    for (const auto& d : devices)
        if (severity(d.verdict.verdict) > severity(best->verdict.verdict)) best = &d;
    return *best;
}

StatsDiff diff_stats(const stats::StatsCapture& before, const stats::StatsCapture& after,
                     std::optional<std::pair<std::int64_t, std::int64_t>> steps) {
    if (steps && steps->second <= steps->first)
        throw usage_error(fmt::format("steps must increase: got {} then {}", steps->first, steps->second));
    StatsDiff diff;
    diff.before_kind = before.kind;
    diff.after_kind = after.kind;
    diff.steps = steps;
    const bool one_series = same_tables(before, after);
    const auto b = by_device(before);
    const auto a = by_device(after);

    std::vector<std::pair<std::optional<int>, std::optional<int>>> pairs;  // (before key, after key)
    for (const auto& [dev, tables] : b)
        if (a.count(dev)) pairs.emplace_back(dev, dev);
    std::string pairing_note;
    if (pairs.empty() && b.size() == 1 && a.size() == 1) {
        pairs.emplace_back(b.begin()->first, a.begin()->first);
        pairing_note = fmt::format("compared {} (before) with {} (after): the only device on each side",
                                   device_name(b.begin()->first), device_name(a.begin()->first));
    }
    if (pairs.empty()) throw input_error("no device appears in both captures");

    for (const auto& [bd, ad] : pairs) {
        std::vector<Entry> series;
        for (const auto* t : b.at(bd)) series.push_back({t, "before"});
        if (!one_series)
            for (const auto* t : a.at(ad)) series.push_back({t, "after"});
        auto d = diff_series(bd ? bd : ad, series, steps);
        if (!pairing_note.empty()) d.notes.insert(d.notes.begin(), pairing_note);
        diff.devices.push_back(std::move(d));
    }
    for (const auto& [dev, tables] : b)
        if (!a.count(dev) && pairing_note.empty())
            diff.devices.front().notes.push_back(fmt::format("{} appears only in before; not compared", device_name(dev)));
    for (const auto& [dev, tables] : a)
        if (!b.count(dev) && pairing_note.empty())
            diff.devices.front().notes.push_back(fmt::format("{} appears only in after; not compared", device_name(dev)));
    return diff;
}

std::optional<std::string> check_growth_gate(const StatsDiff& diff, std::int64_t bytes_per_step) {
    std::vector<std::string> trips;
    for (const auto& d : diff.devices) {
        const auto it = d.metrics.find("allocated_bytes.all.current");
        if (it == d.metrics.end()) continue;
        const auto& delta = it->second.delta;
        std::int64_t span = 0;
        const char* unit = "step";
        if (diff.steps) {
            span = diff.steps->second - diff.steps->first;
        } else {
            span = static_cast<std::int64_t>(std::max<std::size_t>(d.series.size(), 2) - 1);
            unit = "capture";
        }
        if (static_cast<Wide>(delta.low) > static_cast<Wide>(bytes_per_step) * span) {
            trips.push_back(fmt::format(
                "allocated memory (allocated_bytes.all.current) on {} grows by at least {} per {} "
                "(limit {} per {}): {} over {} {}(s)",
                device_name(d.device), util::signed_bytes(range_divide(delta, span).low), unit,
                util::human_bytes(bytes_per_step), unit, stats::format_delta(delta, true), span, unit));
        }
    }
    if (trips.empty()) return std::nullopt;
    std::string out;
    for (const auto& t : trips) out += (out.empty() ? "" : "; ") + t;
    return out;
}

}  // namespace memsnap::analysis
