#include <memsnap/stats/text_reader.hpp>

#include <memsnap/error.hpp>
#include "stats_dict.hpp"
#include "summary_tables.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace memsnap::stats {

std::string_view to_string(CaptureKind kind) {
    switch (kind) {
        case CaptureKind::memory_summary: return "memory_summary";
        case CaptureKind::memory_stats: return "memory_stats";
    }
    return "unknown";
}

namespace {

// The text held in a JSON document's strings: a Jupyter notebook keeps printed output as
// arrays of lines, which are joined; other strings become lines of their own.
void collect_strings(const nlohmann::json& j, std::string& out, int depth) {
    if (depth > 64) return;
    if (j.is_string()) {
        out += j.get_ref<const std::string&>();
        out += '\n';
    } else if (j.is_array() && !j.empty() &&
               std::all_of(j.begin(), j.end(), [](const auto& e) { return e.is_string(); })) {
        for (const auto& e : j) out += e.get_ref<const std::string&>();
        out += '\n';
    } else if (j.is_structured()) {
        for (const auto& e : j) collect_strings(e, out, depth + 1);
    }
}

StatsCapture find_captures(std::string_view text, const std::string& file);

}  // namespace

StatsCapture read_stats_text(std::string_view text, const std::string& file) {
    StatsCapture capture = find_captures(text, file);
    capture.file = file;
    if (!capture.tables.empty()) return capture;
    // Output saved inside JSON (a notebook, a JSON log): read the text of its strings.
    const auto json = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
    if (!json.is_discarded() && json.is_structured()) {
        std::string strings;
        collect_strings(json, strings, 0);
        capture = find_captures(strings, file + " (text in its JSON strings)");
        capture.file = file;
        if (!capture.tables.empty()) return capture;
    }
    throw input_error("no memory_summary table or memory_stats dict found", file);
}

namespace {

StatsCapture find_captures(std::string_view text, const std::string& file) {
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
    capture.kind = CaptureKind::memory_stats;
    return capture;
}

}  // namespace

}  // namespace memsnap::stats
