// The documents of memory_summary / memory_stats captures: `info` ("kind": "memory_summary" or
// "memory_stats") and `diff` ("kind": "summary_diff"). Keys are memory_stats names, so that
// summaries and stats compare; values are ranges (a summary cell is truncated to its unit).
#include "common.hpp"
#include "documents.hpp"
#include "phrases.hpp"

#include <memsnap/stats/keys.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <array>

namespace memsnap::report::doc {

namespace {

// The rows people read first; JSON and CSV have every row.
constexpr std::array<const char*, 13> kKeyMetrics = {
    stats::keys::allocated_current, stats::keys::reserved_current,        stats::keys::active_current,
    stats::keys::requested_current, stats::keys::non_releasable_current,  stats::keys::allocated_peak,
    stats::keys::reserved_peak,     stats::keys::allocations_current,     stats::keys::active_blocks_current,
    stats::keys::segments_current,  stats::keys::inactive_splits_current, stats::keys::num_ooms,
    stats::keys::num_alloc_retries};

bool key_metric(std::string_view key) {
    return std::find(kKeyMetrics.begin(), kKeyMetrics.end(), key) != kKeyMetrics.end();
}

Value range_of(std::string_view key, ByteRange r) {
    return stats::is_byte_metric(key) ? Value::range(r) : Value::count_range(r);
}

// A value cudaMallocAsync does not track (its tables give 0) is none, a dash in text.
Value tracked_or_none(const stats::StatsTable& t, std::string_view key) {
    const auto* value = stats::tracked_value(t, key);
    return value ? range_of(key, *value) : Value::none();
}

Node table_record(const analysis::StatsInfo& info, std::size_t i) {
    const auto& t = info.capture.tables[i];
    auto r = Node::object("", Layout::facts);
    r.add("table", Value::text_of(fmt::format("table {} (line {})", info.table_number(i), t.line)))
        .people_only()
        .in_headline();
    r.add("table_number", Value::count(static_cast<std::int64_t>(info.table_number(i)))).machines_only().key = "table";
    r.add("device", Value::optional<int>(t.device, [](int v) { return Value::count(v); })).machines_only();
    r.add("device_name", Value::text_of(util::device_name(t.device))).people_only().in_headline();
    r.add("line", Value::count(static_cast<std::int64_t>(t.line))).machines_only();
    r.add("step", Value::optional<std::int64_t>(t.step, Value::count)).machines_only();
    r.add("layout", Value::text_of(t.layout.text())).in_headline();
    r.add(stats::keys::num_ooms, tracked_or_none(t, stats::keys::num_ooms), "OOMs");
    r.add(stats::keys::num_alloc_retries, tracked_or_none(t, stats::keys::num_alloc_retries), "allocation retries");
    auto& stats = r.add(Node::object("stats", Layout::facts));
    for (const auto& [key, value] : t.stats) {
        auto& n = stats.add(std::string(key), tracked_or_none(t, key), std::string(key));
        if (!key_metric(key)) n.machines_only();
    }
    // The totals a query compares across captures, by the names snapshots give them.
    auto& totals = r.add(Node::object("totals", Layout::hidden));
    totals.record = "total";
    for (const char* name :
         {"allocated_bytes", "reserved_bytes", "active_bytes", "requested_bytes", "inactive_split_bytes"})
        if (const auto* value = stats::tracked_value(t, std::string(name) + ".all.current"))
            totals.add(name, Value::range(*value));
    r.add(sentences("warnings", t.warnings, "warnings"));
    return r;
}

}  // namespace

Document stats_info(const analysis::StatsInfo& info) {
    Document doc;
    const auto& capture = info.capture;
    doc.kind = std::string(stats::to_string(capture.kind));
    doc.title = fmt::format("{} capture, {} table(s){}", stats::to_string(capture.kind), info.tables_total(),
                            info.device ? fmt::format(" of device {}", *info.device) : "");
    auto& root = doc.root;
    root.add("path", Value::text_of(capture.file)).machines_only();
    root.add("device", Value::optional<int>(info.device, [](int v) { return Value::count(v); })).machines_only();
    auto& tables = root.add(Node::list("tables", Layout::records));
    for (std::size_t i = 0; i < capture.tables.size(); ++i) tables.add(table_record(info, i));
    root.add("tables_total", Value::count(static_cast<std::int64_t>(info.tables_total()))).machines_only();
    auto& omitted =
        root.add("tables_not_listed", Value::count(static_cast<std::int64_t>(info.omitted)), "tables not shown");
    omitted.note = "--top 0 lists all";
    if (info.omitted == 0) omitted.machines_only();
    doc.jsonl_context = {"device", "table"};
    return doc;
}

namespace {

Node metrics_table(const analysis::DeviceDiff& d, bool steps_known) {
    auto out = Node::list("metrics", Layout::table);
    out.keyed_by = "metric";
    out.primary = true;  // CSV: one row per device and metric
    for (const auto& [key, m] : d.metrics) {
        auto& row = out.add(Node::object("", Layout::facts));
        row.add("metric", Value::word(key));
        row.add("before", range_of(key, m.before));
        row.add("after", range_of(key, m.after));
        row.add("delta", Value::change_range(m.delta, stats::is_byte_metric(key))).label = "change";
        auto& per_step = row.add(
            "per_step", m.per_step ? Value::change_range(*m.per_step, stats::is_byte_metric(key)) : Value::none(),
            util::per_unit(steps_known).data());
        if (!steps_known) per_step.machines_only();  // two captures: the change; more: the series lines
        if (!key_metric(key)) row.machines_only();
    }
    return out;
}

// People read a long series by its ends; machines get every listed point.
constexpr std::size_t kEndsShown = 5;

template <class Items, class Format>
std::string ends_of(const Items& items, Format&& format) {
    const std::size_t n = items.size();
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        if (n > 2 * kEndsShown + 2 && i == kEndsShown) {
            out += fmt::format(", … {} more …", n - 2 * kEndsShown);
            i = n - kEndsShown - 1;
            continue;
        }
        out += (out.empty() ? "" : ", ") + format(items[i]);
    }
    return out;
}

std::string points_text(const analysis::DeviceDiff& d) {
    return ends_of(d.series, [](const analysis::SeriesPoint& p) {
        return fmt::format("#{} {} line {}{}", p.index, p.source, p.line,
                           p.step ? fmt::format(" step {}", *p.step) : std::string());
    });
}

Node series_of(const analysis::DeviceDiff& d) {
    auto out = Node::list("series", Layout::hidden);
    // A trend holds the values of the listed points only, in the order of d.series; p.index is
    // the table's place in the whole log.
    for (std::size_t listed = 0; listed < d.series.size(); ++listed) {
        const auto& p = d.series[listed];
        auto& point = out.add(Node::object("", Layout::facts));
        point.add("index", Value::count(static_cast<std::int64_t>(p.index)));
        point.add("source", Value::word(p.source));
        point.add("line", Value::count(static_cast<std::int64_t>(p.line)));
        point.add("step", Value::optional<std::int64_t>(p.step, Value::count));
        auto& values = point.add(Node::object("values", Layout::facts));
        for (const auto& [key, trend] : d.trends) values.add(key, range_of(key, trend.values.at(listed)));
    }
    return out;
}

Node trends_of(const analysis::DeviceDiff& d) {
    auto out = Node::object("trends", Layout::hidden);
    for (const auto& [key, t] : d.trends) {
        auto& n = out.add(Node::object(key, Layout::facts));
        n.add("first_to_last", range_of(key, t.first_to_last));
        n.add("direction", Value::word(std::string(analysis::to_string(t.direction))));
        n.add("monotone", Value::flag(t.monotone));
        n.add("slope", range_of(key, t.slope));
        n.add("slope_unit", Value::word(std::string(analysis::to_string(t.slope_unit))));
    }
    return out;
}

std::vector<std::string> series_lines(const analysis::DeviceDiff& d) {
    std::vector<std::string> out;
    for (const auto& [key, t] : d.trends) {
        const bool bytes = stats::is_byte_metric(key);
        const auto values = ends_of(t.values, [&](const ByteRange& v) { return util::format_range_compact(v, bytes); });
        out.push_back(fmt::format("{}: {}, first→last {}, {} {}; values: {}", key, analysis::to_string(t.direction),
                                  util::format_delta(t.first_to_last, bytes), util::format_delta(t.slope, bytes),
                                  t.slope_unit == analysis::SlopeUnit::per_step ? "per step" : "per capture", values));
    }
    return out;
}

Node device_record(const analysis::DeviceDiff& d, bool steps_known) {
    auto r = Node::object("", Layout::facts);
    r.add("device", Value::optional<int>(d.device, [](int v) { return Value::count(v); })).machines_only();
    r.add("device_name", Value::text_of(util::device_name(d.device))).people_only().in_headline();
    r.add("verdict", Value::verdict(analysis::to_string(d.verdict))).in_headline();
    r.add(facts("evidence", d.evidence, "evidence"));
    r.add(advice("advice", d.advice, "advice"));
    r.add(metrics_table(d, steps_known));
    r.add(series_of(d));
    r.add(trends_of(d));
    // Two points are the metrics table's before and after.
    if (d.series.size() > 2)
        r.add(sentences("series_lines", series_lines(d),
                        fmt::format("series ({} tables: {})", d.series.size(), points_text(d))))
            .people_only();
    r.add(sentences("missing", d.missing, "missing"));
    r.add(facts("notes", d.notes, "notes"));
    return r;
}

}  // namespace

Document stats_diff(const analysis::StatsDiff& diff) {
    Document doc;
    doc.kind = "summary_diff";
    doc.title =
        fmt::format("memory diff ({} → {})", stats::to_string(diff.before_kind), stats::to_string(diff.after_kind));
    auto& root = doc.root;
    root.add("before", Value::text_of(diff.before_file));
    root.add("after", Value::text_of(diff.after_file));
    root.add("steps_text", Value::text_of(steps_text(diff.steps)), "steps").people_only();
    if (diff.steps.span) {
        root.add(numbers("steps", {diff.steps.span->first, diff.steps.span->second}));
    } else {
        root.add("steps", Value::none()).machines_only();
    }
    root.add("steps_source", Value::word(diff.steps.source)).machines_only();
    const auto& c = diff.comparability;
    pair_comparability(root, c);
    root.add("before_kind", Value::word(stats::to_string(diff.before_kind))).machines_only();
    root.add("after_kind", Value::word(stats::to_string(diff.after_kind))).machines_only();
    auto& sets = root.add(Node::object("device_sets", Layout::hidden));
    sets.add(
        numbers("before", std::vector<std::int64_t>(diff.device_sets.before.begin(), diff.device_sets.before.end())));
    sets.add(numbers("after", std::vector<std::int64_t>(diff.device_sets.after.begin(), diff.device_sets.after.end())));
    // The primary device at the top level, so that one-device captures read simply.
    auto& primary = root.add(device_record(diff.primary(), diff.steps.known()));
    primary.merge = true;
    primary.machines_only();
    for (auto& item : primary.items) item.primary = false;  // CSV rows come from `devices`
    root.add(facts("warnings", diff.warnings)).machines_only();
    auto& devices = root.add(Node::list("devices", Layout::records));
    for (const auto& d : diff.devices) devices.add(device_record(d, diff.steps.known()));
    root.add(sentences("ranges_note",
                       {fmt::format("memory_summary values are truncated to their unit; ranges show what the tables "
                                    "allow ({} → {})",
                                    stats::to_string(diff.before_kind), stats::to_string(diff.after_kind))},
                       "Notes"))
        .people_only();
    return doc;
}

}  // namespace memsnap::report::doc
