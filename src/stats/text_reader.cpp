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

// A log that prints a table every N steps says which step just above it: the nearest of the
// three lines before a table (after the previous table) that names a step gives it. Tables
// come in file order, so one pass over the lines serves them all.
class StepFinder {
  public:
    explicit StepFinder(std::string_view text) : text_(text) {}

    void assign(StatsTable& table) {
        while (line_ < table.line && pos_ <= text_.size()) {
            const auto end = std::min(text_.find('\n', pos_), text_.size());
            above_[line_ % kLinesAbove] = text_.substr(pos_, end - pos_);
            above_line_[line_ % kLinesAbove] = line_;
            ++line_;
            pos_ = end + 1;
        }
        for (std::size_t k = 1; k <= kLinesAbove && k < table.line; ++k) {
            const std::size_t slot = (table.line - k) % kLinesAbove;
            if (above_line_[slot] != table.line - k || table.line - k <= after_previous_) break;
            if (const auto step = util::step_from_text(above_[slot])) {
                table.step = step;
                break;
            }
        }
        after_previous_ = table.line;
    }

  private:
    static constexpr std::size_t kLinesAbove = 3;
    std::string_view text_;
    std::size_t pos_ = 0, line_ = 1, after_previous_ = 0;
    std::string_view above_[kLinesAbove];
    std::size_t above_line_[kLinesAbove] = {};
};

// Every table of `text` to `sink` with its step, and the kind; no table: nullopt.
std::optional<CaptureKind> stream_tables(std::string_view text, const std::string& file, const TableSink& sink) {
    StepFinder steps(text);
    const auto emit = [&](StatsTable&& table) {
        steps.assign(table);
        sink(std::move(table));
    };
    if (auto last = find_summary_tables(text, file, emit)) {
        if (const auto dicts = find_stats_dicts(text, file); !dicts.empty())
            last->warnings.push_back(
                fmt::format("{}: also holds {} memory_stats dict(s); only the memory_summary tables are used",
                            file.empty() ? std::string("input") : file, dicts.size()));
        emit(std::move(*last));
        return CaptureKind::memory_summary;
    }
    auto dicts = find_stats_dicts(text, file);
    if (dicts.empty()) return std::nullopt;
    for (auto& d : dicts) emit(std::move(d));
    return CaptureKind::memory_stats;
}

}  // namespace

CaptureKind read_stats_tables(std::string_view text, const std::string& file, const TableSink& sink) {
    std::set<int> devices;
    const auto checked = [&](StatsTable&& table) {
        if (table.device && devices.insert(*table.device).second && devices.size() > kMaxDevices)
            throw input_error(fmt::format("tables of more than {} different devices: more than a capture of one "
                                          "machine can hold, so the file is damaged or crafted",
                                          kMaxDevices),
                              file);
        sink(std::move(table));
    };
    if (const auto kind = stream_tables(text, file, checked)) return *kind;
    // Output saved inside JSON (a notebook, a JSON log): read the text of its strings.
    if (const auto strings = json_strings(text))
        if (const auto kind = stream_tables(*strings, file + " (text in its JSON strings)", checked)) return *kind;
    throw input_error("no memory_summary table or memory_stats dict found", file);
}

StatsCapture read_stats_text(std::string_view text, const std::string& file) {
    StatsCapture capture;
    capture.file = file;
    capture.kind = read_stats_tables(text, file, [&](StatsTable&& t) { capture.tables.push_back(std::move(t)); });
    return capture;
}

}  // namespace memsnap::stats
