#include <memsnap/stats/parse.hpp>

#include <memsnap/error.hpp>
#include <memsnap/stats/stats_dict.hpp>
#include <memsnap/stats/summary.hpp>

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace memsnap::stats {

std::string_view to_string(CaptureKind kind) {
    switch (kind) {
        case CaptureKind::memory_summary: return "memory_summary";
        case CaptureKind::memory_stats: return "memory_stats";
    }
    return "unknown";
}

StatsCapture parse_stats_text(std::string_view text, const std::string& file) {
    StatsCapture capture;
    capture.tables = find_summary_tables(text, file);
    if (!capture.tables.empty()) {
        capture.kind = CaptureKind::memory_summary;
        if (const auto dicts = find_stats_dicts(text, file); !dicts.empty())
            capture.tables.front().warnings.push_back(fmt::format(
                "{}: also holds {} memory_stats dict(s); only the memory_summary tables are used",
                file.empty() ? std::string("input") : file, dicts.size()));
        return capture;
    }
    capture.tables = find_stats_dicts(text, file);
    if (!capture.tables.empty()) {
        capture.kind = CaptureKind::memory_stats;
        return capture;
    }
    throw input_error("no memory_summary table or memory_stats dict found", file);
}

StatsCapture parse_stats_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error("cannot open file", path);
    std::ostringstream buffer;
    buffer << in.rdbuf();
    if (in.bad()) throw input_error("cannot read file", path);
    return parse_stats_text(buffer.str(), path);
}

}  // namespace memsnap::stats
