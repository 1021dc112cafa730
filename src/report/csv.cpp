// CSV writers for the diffs: one row per listed site (snapshots) or per device and metric
// (summaries). RFC 4180 quoting, LF line ends.
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <cmath>

namespace memsnap::report::detail {

namespace {

// A field quoted when it holds a comma or a quote (RFC 4180); inner quotes doubled. Control
// characters from the input are escaped ("\n", "\x1b"), so a field is always one line.
std::string field(std::string_view raw) {
    const std::string text = util::printable(raw);
    if (text.find_first_of(",\"") == std::string::npos) return text;
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

// Fixed notation so that files compare across runs and platforms; no "-0.000", and an
// empty field rather than "nan" or "inf".
std::string fixed(double value, int decimals) {
    if (!std::isfinite(value)) return "";
    std::string out = fmt::format("{:.{}f}", value, decimals);
    if (out.find_first_not_of("-0.") == std::string::npos && out.front() == '-') out.erase(0, 1);
    return out;
}

}  // namespace

std::string snapshot_diff_csv(const analysis::SnapshotDiff& diff) {
    std::string out =
        "rank,filename,line,name,verdict,before_bytes,after_bytes,delta_bytes,before_blocks,after_blocks,"
        "delta_blocks,new_blocks,gone_blocks,growth_bytes_per_step,share,pattern,category\n";
    for (const auto& s : diff.sites)
        out +=
            fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.rank, field(s.site.filename),
                        s.site.line, field(s.site.name), analysis::to_string(s.verdict), s.before_bytes, s.after_bytes,
                        s.delta_bytes, s.before_blocks, s.after_blocks, s.delta_blocks, s.new_blocks, s.gone_blocks,
                        fixed(s.growth_bytes_per_step, 3), s.share ? fixed(*s.share, 6) : std::string(),
                        field(s.diagnosis.pattern), analysis::to_string(s.category));
    return out;
}

std::string stats_diff_csv(const analysis::StatsDiff& diff) {
    std::string out =
        "device,metric,before_low,before_high,after_low,after_high,delta_low,delta_high,per_step_low,per_step_high\n";
    for (const auto& d : diff.devices) {
        const auto device = d.device ? fmt::format("{}", *d.device) : std::string();
        for (const auto& [key, m] : d.metrics)
            out += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", device, field(key), m.before.low, m.before.high,
                               m.after.low, m.after.high, m.delta.low, m.delta.high,
                               m.per_step ? fmt::format("{}", m.per_step->low) : std::string(),
                               m.per_step ? fmt::format("{}", m.per_step->high) : std::string());
    }
    return out;
}

}  // namespace memsnap::report::detail

namespace memsnap::report::detail {

std::string trace_csv(const analysis::TraceResult& t) {
    std::string out =
        "rank,filename,line,name,category,verdict,live_allocations,live_bytes,warmup_allocations,"
        "current_allocations,leak_allocations_per_iteration,leak_bytes_per_iteration,per_iteration\n";
    for (const auto& s : t.sites) {
        std::string per;
        for (const auto c : s.per_iteration) per += fmt::format("{}{}", per.empty() ? "" : " ", c);
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.rank, field(s.site.filename), s.site.line,
                           field(s.site.name), analysis::to_string(s.category), s.verdict, s.live_allocations,
                           s.live_bytes, s.warmup_allocations, s.current_allocations, s.leak_allocations_per_iteration,
                           s.leak_bytes_per_iteration, per);
    }
    return out;
}

}  // namespace memsnap::report::detail

namespace memsnap::report::detail {

std::string trend_csv(const analysis::TrendResult& t) {
    std::string out =
        "record,rank,name,filename,line,category,verdict,slope_bytes_per_step,r2,monotonic_share,first_step";
    for (const auto step : t.steps) out += fmt::format(",bytes_at_{}", step);
    out += "\n";
    const auto row = [&](std::string_view record, std::size_t rank, std::string_view name,
                         const analysis::SiteKey* site, std::string_view category, const analysis::SeriesFit& f,
                         const std::vector<std::int64_t>& bytes) {
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{}", record, rank, field(name),
                           site ? field(site->filename) : "", site ? site->line : 0, category, f.verdict,
                           fixed(f.slope_bytes_per_step, 1), fixed(f.r2, 4), fixed(f.monotonic_share, 4),
                           f.first_step ? fmt::format("{}", *f.first_step) : "");
        for (const auto b : bytes) out += fmt::format(",{}", b);
        out += "\n";
    };
    for (const auto& s : t.totals) row("total", 0, s.name, nullptr, "", s.fit, s.bytes);
    for (const auto& s : t.categories) row("category", 0, s.name, nullptr, s.name, s.fit, s.bytes);
    for (const auto& s : t.sites)
        row("site", s.rank, s.site.name, &s.site, analysis::to_string(s.category), s.fit, s.bytes_by_step);
    return out;
}

std::string ranks_csv(const analysis::RanksResult& r) {
    std::string out =
        "rank,file,allocated_bytes,reserved_bytes,active_bytes,inactive_split_bytes,delta_bytes,outlier\n";
    for (const auto& k : r.ranks) {
        bool outlier = false;
        for (const auto& o : r.outliers) outlier = outlier || o.rank == k.rank;
        out += fmt::format("{},{},{},{},{},{},{},{}\n", k.rank, field(k.file), k.totals.allocated_bytes,
                           k.totals.reserved_bytes, k.totals.active_bytes, k.totals.inactive_split_bytes,
                           k.totals.allocated_bytes - r.median.allocated_bytes, outlier ? "true" : "false");
    }
    return out;
}

}  // namespace memsnap::report::detail
