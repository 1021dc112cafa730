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
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.rank, field(s.site.filename),
                           s.site.line, field(s.site.name), analysis::to_string(s.verdict), s.before_bytes,
                           s.after_bytes, s.delta_bytes, s.before_blocks, s.after_blocks, s.delta_blocks,
                           s.new_blocks, s.gone_blocks, fixed(s.growth_bytes_per_step, 3),
                           s.share ? fixed(*s.share, 6) : std::string(), field(s.diagnosis.pattern),
                           analysis::to_string(s.category));
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
