// Text writers for memory_summary / memory_stats captures: `info` and `diff`.
#include "format.hpp"
#include "stats_rows.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <array>

namespace memsnap::report::detail {

std::string stats_info_text(const analysis::StatsInfo& info) {
    static constexpr std::array<std::pair<const char*, const char*>, 5> rows = {{
        {"allocated", "allocated_bytes"},
        {"reserved", "reserved_bytes"},
        {"active", "active_bytes"},
        {"requested", "requested_bytes"},
        {"non-releasable", "inactive_split_bytes"},
    }};
    const auto& capture = info.capture;
    std::string out = fmt::format("{} capture, {} table(s){}\n", stats::to_string(capture.kind), info.tables_total(),
                                  info.device ? fmt::format(" of device {}", *info.device) : "");
    for (std::size_t i = 0; i < capture.tables.size(); ++i) {
        const auto& t = capture.tables[i];
        if (info.omitted != 0 && i == info.omitted_at)
            out += fmt::format("\n… {} table(s) not shown (--top 0 lists all)\n", info.omitted);
        out += fmt::format("\ntable {} (line {}): {}, layout {}\n", info.table_number(i), t.line,
                           util::device_name(t.device), t.layout);
        auto count = [](const std::optional<ByteRange>& r) {
            return r ? util::format_range(*r, false) : std::string("unknown");
        };
        out += fmt::format("  OOMs: {}, allocation retries: {}\n", count(t.num_ooms), count(t.num_alloc_retries));
        for (const auto& [name, key] : rows) {
            const auto cur = t.stats.find(fmt::format("{}.all.current", key));
            const auto peak = t.stats.find(fmt::format("{}.all.peak", key));
            if (cur == t.stats.end() && peak == t.stats.end()) continue;
            auto show = [&](auto it) {
                return it == t.stats.end() ? std::string("unknown") : util::format_range(it->second, true);
            };
            out += fmt::format("  {:<15} current {}\n  {:<15} peak    {}\n", name, show(cur), "", show(peak));
        }
        for (const auto* key : {"allocation.all.current", "segment.all.current"}) {
            if (const auto it = t.stats.find(key); it != t.stats.end())
                out += fmt::format("  {:<15} {}\n", key[0] == 'a' ? "allocations" : "segments",
                                   util::format_range(it->second, false));
        }
        if (!t.warnings.empty()) {
            out += "  warnings:\n";
            for (const auto& w : t.warnings) out += fmt::format("    - {}\n", util::printable(w));
        }
    }
    return out;
}

std::string stats_diff_text(const analysis::StatsDiff& diff) {
    std::string out = fmt::format("memory diff ({} → {}), steps {}\n", stats::to_string(diff.before_kind),
                                  stats::to_string(diff.after_kind), steps_text(diff.steps));
    out += fmt::format("same process: {}\n", same_process_text(diff.same_process));
    for (const auto& d : diff.devices) {
        out += fmt::format("\n{}: verdict {}\n\n", util::device_name(d.device), analysis::to_string(d.verdict.verdict));
        out += fmt::format("  {:<34} {:<22} {:<22} {:<26} {}\n", "metric", "before", "after", "delta",
                           util::per_unit(diff.steps.known()));
        for (const auto& r : key_rows(d))
            out += fmt::format("  {:<34} {:<22} {:<22} {:<26} {}\n", r.metric, r.before, r.after, r.delta, r.per_step);
        out += "\n  evidence:\n";
        for (const auto& e : d.verdict.evidence) out += fmt::format("    - {}\n", e);
        out += "  advice:\n";
        for (const auto& a : d.verdict.advice) out += fmt::format("    - {}\n", a);
        if (d.series.size() > 1) {
            out += fmt::format("  series ({} tables: {}):\n", d.series.size(), points_text(d));
            for (const auto& line : series_lines(d)) out += fmt::format("    {}\n", line);
        }
        if (!d.notes.empty()) {
            out += "  notes:\n";
            for (const auto& n : d.notes) out += fmt::format("    - {}\n", util::printable(n));
        }
    }
    return out;
}

}  // namespace memsnap::report::detail
