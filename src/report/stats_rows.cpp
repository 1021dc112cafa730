#include "stats_rows.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <array>

namespace memsnap::report::detail {

namespace {

constexpr std::array<const char*, 13> kKeyMetrics = {"allocated_bytes.all.current",
                                                     "reserved_bytes.all.current",
                                                     "active_bytes.all.current",
                                                     "requested_bytes.all.current",
                                                     "inactive_split_bytes.all.current",
                                                     "allocated_bytes.all.peak",
                                                     "reserved_bytes.all.peak",
                                                     "allocation.all.current",
                                                     "active.all.current",
                                                     "segment.all.current",
                                                     "inactive_split.all.current",
                                                     "num_ooms",
                                                     "num_alloc_retries"};

}  // namespace

std::vector<StatsRow> key_rows(const analysis::DeviceDiff& d) {
    std::vector<StatsRow> rows;
    for (const char* key : kKeyMetrics) {
        const auto it = d.metrics.find(key);
        if (it == d.metrics.end()) continue;
        const auto& m = it->second;
        const bool bytes = stats::is_byte_metric(key);
        rows.push_back({key, util::format_range_compact(m.before, bytes), util::format_range_compact(m.after, bytes),
                        util::format_delta(m.delta, bytes),
                        m.per_step ? util::format_delta(*m.per_step, bytes) : std::string("—")});
    }
    return rows;
}

std::string points_text(const analysis::DeviceDiff& d) {
    std::string out;
    for (const auto& p : d.series)
        out += fmt::format("{}#{} {} line {}{}", out.empty() ? "" : ", ", p.index, p.source, p.line,
                           p.step ? fmt::format(" step {}", *p.step) : std::string());
    return out;
}

std::vector<std::string> series_lines(const analysis::DeviceDiff& d) {
    std::vector<std::string> out;
    for (const auto& [key, t] : d.trends) {
        const bool bytes = stats::is_byte_metric(key);
        std::string values;
        for (const auto& v : t.values) values += (values.empty() ? "" : ", ") + util::format_range_compact(v, bytes);
        out.push_back(fmt::format("{}: {}, first→last {}, {} {}; values: {}", key, t.direction,
                                  util::format_delta(t.first_to_last, bytes), util::format_delta(t.slope, bytes),
                                  t.slope_unit == "per_step" ? "per step" : "per capture", values));
    }
    return out;
}

}  // namespace memsnap::report::detail
