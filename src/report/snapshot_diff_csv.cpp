// CSV writer for the snapshot diff: one row per listed site, RFC 4180 quoting (LF line ends,
// as the other CSV writers).
// Prints a SnapshotDiff as it is; every figure comes from analysis.
#include <memsnap/report/snapshot_diff.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

namespace memsnap::report {

namespace {

// A field quoted when it holds a comma, a quote or a line break; inner quotes doubled.
std::string field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
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

std::string render_snapshot_diff_csv(const analysis::SnapshotDiff& diff, const DiffRenderOptions& options) {
    std::string out =
        "rank,filename,line,name,verdict,before_bytes,after_bytes,delta_bytes,before_blocks,after_blocks,"
        "delta_blocks,new_blocks,gone_blocks,growth_bytes_per_step,share,pattern\n";
    std::size_t listed = 0;
    for (const auto& s : diff.sites) {
        if (std::llabs(s.delta_bytes) < options.min_growth) continue;
        if (options.top != 0 && listed >= options.top) break;
        ++listed;
        out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", s.rank, field(s.site.filename),
                           s.site.line, field(s.site.name), analysis::to_string(s.verdict), s.before_bytes,
                           s.after_bytes, s.delta_bytes, s.before_blocks, s.after_blocks, s.delta_blocks,
                           s.new_blocks, s.gone_blocks, fixed(s.growth_bytes_per_step, 3), fixed(s.share, 6),
                           field(s.diagnosis.pattern));
    }
    return out;
}

}  // namespace memsnap::report
