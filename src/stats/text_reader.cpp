#include "stats_dict.hpp"
#include "summary_tables.hpp"

#include <memsnap/error.hpp>
#include <memsnap/stats/text_reader.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

namespace memsnap::stats {

std::string TableLayout::text() const {
    using G = Generation;
    std::string out = generation == G::torch_1_9_or_older   ? "torch<=1.9"
                      : generation == G::torch_1_10_to_1_13 ? "torch1.10-1.13"
                      : generation == G::torch_2_0_or_newer ? "torch>=2.0"
                      : generation == G::memory_stats       ? "memory_stats"
                                                            : "unknown";
    const std::pair<bool, const char*> flags[] = {
        {abbreviated, ",abbreviated"}, {cut, ",cut"}, {old_units, ",old-units"}};
    for (const auto& [on, name] : flags)
        if (on) out += name;
    for (const auto& f : forks) out += ",fork:" + f;
    if (cuda_malloc_async) out += ",cudaMallocAsync";
    if (nested) out += ",nested";
    if (python_repr) out += ",python-repr";
    return out;
}

std::string_view to_string(CaptureKind kind) {
    switch (kind) {
        case CaptureKind::memory_summary:
            return "memory_summary";
        case CaptureKind::memory_stats:
            return "memory_stats";
    }
    return "unknown";
}

namespace {

// The text held in a JSON document's strings, read as a stream (never as a tree, so a large
// document costs no more than its strings): a Jupyter notebook keeps printed output as
// arrays of lines, which are joined; other strings become lines of their own. nullopt when
// the text is not a JSON object or array.
class StringCollector : public nlohmann::json_sax<nlohmann::json> {
  public:
    std::string out;
    bool null() override { return flush(); }
    bool boolean(bool) override { return flush(); }
    bool number_integer(number_integer_t) override { return flush(); }
    bool number_unsigned(number_unsigned_t) override { return flush(); }
    bool number_float(number_float_t, const string_t&) override { return flush(); }
    bool string(string_t& s) override {
        out += s;
        if (depth_kind_.empty() || !depth_kind_.back()) out += '\n';  // not in an array: a line
        return true;
    }
    bool binary(binary_t&) override { return flush(); }
    bool start_object(std::size_t) override { return open(false); }
    bool key(string_t&) override { return true; }
    bool end_object() override { return close(); }
    bool start_array(std::size_t) override { return open(true); }
    bool end_array() override { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

  private:
    bool flush() { return true; }
    bool open(bool array) {
        if (array && !out.empty() && out.back() != '\n') out += '\n';
        depth_kind_.push_back(array);
        return depth_kind_.size() <= 256;
    }
    bool close() {
        if (!depth_kind_.empty() && depth_kind_.back() && !out.empty() && out.back() != '\n') out += '\n';
        if (!depth_kind_.empty()) depth_kind_.pop_back();
        return true;
    }
    std::vector<bool> depth_kind_;  // per open container: an array?
};

std::optional<std::string> json_strings(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || (text[first] != '{' && text[first] != '[')) return std::nullopt;
    StringCollector collector;
    if (!nlohmann::json::sax_parse(text.begin(), text.end(), &collector)) return std::nullopt;
    return std::move(collector.out);
}

StatsCapture find_captures(std::string_view text, const std::string& file);

}  // namespace

// A log that prints a table every N steps says which step just above it: the nearest of the
// three lines before a table (after the previous table) that names a step gives it.
static void find_steps(std::string_view text, std::deque<StatsTable>& tables) {
    constexpr std::size_t kLinesAbove = 3;
    std::size_t next = 0, line = 1, after_previous = 0;
    std::string_view above[kLinesAbove];
    std::size_t above_line[kLinesAbove] = {};
    for (std::size_t pos = 0; pos <= text.size() && next < tables.size(); ++line) {
        const auto end = std::min(text.find('\n', pos), text.size());
        const std::string_view current = text.substr(pos, end - pos);
        while (next < tables.size() && tables[next].line == line) {
            for (std::size_t k = 1; k <= kLinesAbove && k < line; ++k) {
                const std::size_t slot = (line - k) % kLinesAbove;
                if (above_line[slot] != line - k || line - k <= after_previous) break;
                if (const auto step = util::step_from_text(above[slot])) {
                    tables[next].step = step;
                    break;
                }
            }
            after_previous = line;
            ++next;
        }
        above[line % kLinesAbove] = current;
        above_line[line % kLinesAbove] = line;
        if (end == text.size()) break;
        pos = end + 1;
    }
}

StatsCapture read_stats_text(std::string_view text, const std::string& file) {
    StatsCapture capture = find_captures(text, file);
    std::optional<std::string> strings;
    if (capture.tables.empty())
        // Output saved inside JSON (a notebook, a JSON log): read the text of its strings.
        if ((strings = json_strings(text))) capture = find_captures(*strings, file + " (text in its JSON strings)");
    find_steps(strings ? std::string_view(*strings) : text, capture.tables);
    capture.file = file;
    if (capture.tables.empty()) throw input_error("no memory_summary table or memory_stats dict found", file);
    std::set<int> devices;
    for (const auto& t : capture.tables)
        if (t.device) devices.insert(*t.device);
    if (devices.size() > kMaxDevices)
        throw input_error(fmt::format("tables of {} different devices: more than the {} a capture of one machine "
                                      "can hold, so the file is damaged or crafted",
                                      devices.size(), kMaxDevices),
                          file);
    return capture;
}

namespace {

StatsCapture find_captures(std::string_view text, const std::string& file) {
    StatsCapture capture;
    capture.tables = find_summary_tables(text, file);
    if (!capture.tables.empty()) {
        capture.kind = CaptureKind::memory_summary;
        if (const auto dicts = find_stats_dicts(text, file); !dicts.empty())
            capture.tables.front().warnings.push_back(
                fmt::format("{}: also holds {} memory_stats dict(s); only the memory_summary tables are used",
                            file.empty() ? std::string("input") : file, dicts.size()));
        return capture;
    }
    capture.tables = find_stats_dicts(text, file);
    capture.kind = CaptureKind::memory_stats;
    return capture;
}

}  // namespace

}  // namespace memsnap::stats
