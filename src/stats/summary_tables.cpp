#include "summary_tables.hpp"

#include "cells.hpp"
#include "text_lines.hpp"

#include <memsnap/stats/keys.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <optional>
#include <set>

namespace memsnap::stats {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// The pieces of a line between '|' bars, into `out` (reused: one buffer for the whole file).
void split_bars(std::string_view line, std::vector<std::string_view>& out) {
    out.clear();
    std::size_t start = 0;
    while (true) {
        const std::size_t bar = line.find('|', start);
        if (bar == std::string_view::npos) {
            out.push_back(line.substr(start));
            return;
        }
        out.push_back(line.substr(start, bar - start));
        start = bar + 1;
    }
}

// The §8 row order; pooled metrics have "from large/small pool" sub-rows.
struct RowSpec {
    std::string_view key;
    std::string_view label;
    bool size;
    bool pooled;
};
constexpr std::array<RowSpec, 11> kRows = {{
    {"allocated_bytes", "Allocated memory", true, true},
    {"active_bytes", "Active memory", true, true},
    {"requested_bytes", "Requested memory", true, true},
    {"reserved_bytes", "GPU reserved memory", true, true},
    {"inactive_split_bytes", "Non-releasable memory", true, true},
    {"allocation", "Allocations", false, true},
    {"active", "Active allocs", false, true},
    {"segment", "GPU reserved segments", false, true},
    {"inactive_split", "Non-releasable allocs", false, true},
    {"oversize_allocations", "Oversize allocations", false, false},
    {"oversize_segments", "Oversize GPU segments", false, false},
}};

struct LabelMatch {
    const RowSpec* spec = nullptr;  // null for pool rows
    std::string_view pool;          // "large_pool" / "small_pool" for pool rows
    std::string fork;               // device word of a relabelled fork row ("NPU")
};

const RowSpec* spec_for(std::string_view key) {
    for (const auto& r : kRows)
        if (r.key == key) return &r;
    return nullptr;
}

// Forks replace "GPU" by their device name ("NPU reserved memory"); accept any one word.
std::optional<LabelMatch> match_label(std::string_view label) {
    label = trim(label);
    if (label == "from large pool") return LabelMatch{nullptr, "large_pool", {}};
    if (label == "from small pool") return LabelMatch{nullptr, "small_pool", {}};
    for (const auto& r : kRows)
        if (label == r.label) return LabelMatch{&r, {}, {}};
    auto relabelled = [&](std::string_view prefix, std::string_view suffix,
                          std::string_view key) -> std::optional<LabelMatch> {
        if (!starts_with(label, prefix) || !ends_with(label, suffix) || label.size() <= prefix.size() + suffix.size())
            return std::nullopt;
        const auto word = label.substr(prefix.size(), label.size() - prefix.size() - suffix.size());
        if (word.find(' ') != std::string_view::npos) return std::nullopt;
        return LabelMatch{spec_for(key), {}, std::string(word)};
    };
    if (auto m = relabelled("", " reserved memory", "reserved_bytes")) return m;
    if (auto m = relabelled("", " reserved segments", "segment")) return m;
    if (auto m = relabelled("Oversize ", " segments", "oversize_segments")) return m;
    return std::nullopt;
}

std::optional<std::int64_t> int_after(std::string_view line, std::string_view marker) {
    const auto at = line.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    auto rest = trim(line.substr(at + marker.size()));
    std::int64_t value = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
    if (ec != std::errc() || ptr == rest.data()) return std::nullopt;
    return value;
}

// The word in front of `at`, upper-cased ("CUDA" in "CUDA OOMs:" and in "cudaMalloc retries:"),
// so a fork is named the same way by its header, OOM and retry labels.
std::string word_before(std::string_view line, std::size_t at) {
    if (at == std::string_view::npos) return {};
    std::size_t begin = at;
    while (begin > 0 && std::isalnum(static_cast<unsigned char>(line[begin - 1]))) --begin;
    std::string word(line.substr(begin, at - begin));
    for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return word;
}

// "|" then at least 20 of `c`: the border lines of a table.
bool is_border(std::string_view line, char c) {
    for (std::size_t at = line.find('|'); at != std::string_view::npos; at = line.find('|', at + 1)) {
        std::size_t run = 0;
        while (at + 1 + run < line.size() && line[at + 1 + run] == c && run < 20) ++run;
        if (run == 20) return true;
    }
    return false;
}

bool is_elision(std::string_view line) {
    return line.find("...") != std::string_view::npos || line.find("\xE2\x80\xA6") != std::string_view::npos;  // U+2026
}

constexpr std::array<std::string_view, 4> kDefaultColumns = {"current", "peak", "allocated", "freed"};
constexpr std::array<std::string_view, 4> kColumnLabels = {"Cur Usage", "Peak Usage", "Tot Alloc", "Tot Freed"};

std::string_view column_label(std::string_view column) {
    for (std::size_t i = 0; i < 4; ++i)
        if (kDefaultColumns[i] == column) return kColumnLabels[i];
    return column;
}

// One table under construction.
struct Builder {
    StatsTable table;
    std::map<std::string, ByteRange, std::less<>> values;  // table.stats, once finished
    bool title = false;                                    // saw "memory summary, device ID"
    bool has_rows = false;                                 // at least one value row
    bool closed = false;                                   // saw the closing '=' border after rows
    bool pool_rows = false;
    bool old_units = false;
    bool elided = false;
    std::size_t negatives = 0;
    std::set<std::string> forks;
    std::vector<std::string_view> rows_seen;  // keys of main rows, in order
    const RowSpec* current = nullptr;         // last main row, for pool sub-rows
    std::array<std::string_view, 4> columns = kDefaultColumns;
    std::size_t last_line = 0;
};

class SummaryReader {
  public:
    SummaryReader(std::string_view text, const std::string& file, const TableSink& sink)
        : text_(text), file_(file), sink_(sink), warnings_(file) {}

    std::optional<StatsTable> run() {
        for_each_text_line(text_, [this](const TextLine& l) { on_line(l); });
        finish();
        if (const auto more = warnings_.summary(); more && last_) last_->warnings.push_back(*more);
        return std::move(last_);
    }

  private:
    void warn(std::size_t line, std::string_view message) { warnings_.add(open_->table.warnings, line, message); }

    void start(std::size_t line) {
        finish();
        open_.emplace();
        open_->table.line = line;
        open_->last_line = line;
    }

    // "|  PyTorch CUDA memory summary, device ID 0  |": a table's title.
    void on_title(const TextLine& l) {
        const auto s = l.text;
        if (!open_ || open_->title || open_->has_rows) start(l.line);
        open_->title = true;
        open_->table.device = [&]() -> std::optional<int> {
            const auto d = int_after(s, "device ID");
            if (d && *d >= 0 && *d <= kMaxDevice) return static_cast<int>(*d);
            if (d) warn(l.line, fmt::format("device ID {} is not a device index; the device is unknown", *d));
            return std::nullopt;
        }();
        const auto at = s.find(" memory summary");
        const auto word = word_before(s, at);
        if (!word.empty() && word != "CUDA") open_->forks.insert(word);
        open_->last_line = l.line;
    }

    // "|  CUDA OOMs: 0  |  cudaMalloc retries: 0  |".
    void on_ooms(const TextLine& l) {
        const auto s = l.text;
        if (!open_) start(l.line);
        if (auto v = int_after(s, "OOMs:")) open_->table.num_ooms = ByteRange::exact(*v);
        const auto word = word_before(s, s.find(" OOMs:"));
        if (!word.empty() && word != "CUDA") open_->forks.insert(word);
        if (auto v = int_after(s, "retries:")) open_->table.num_alloc_retries = ByteRange::exact(*v);
        if (const auto at = s.find("Malloc retries:"); at != std::string_view::npos) {
            const auto w = word_before(s, at);
            if (!w.empty() && w != "CUDA") open_->forks.insert(w);
        }
        open_->last_line = l.line;
    }

    // "=====": a table's first or last border.
    void on_double_border(const TextLine& l) {
        if (open_ && open_->has_rows) {
            open_->closed = true;
            open_->last_line = l.line;
            finish();
        } else if (!open_) {
            start(l.line);
        } else {
            open_->last_line = l.line;
        }
    }

    void on_line(const TextLine& l) {
        const auto s = l.text;
        if (s.find("memory summary") != std::string_view::npos && s.find("device ID") != std::string_view::npos)
            return on_title(l);
        if (s.find("OOMs:") != std::string_view::npos) return on_ooms(l);
        if (is_border(s, '=')) return on_double_border(l);
        if (is_border(s, '-')) {
            if (open_) open_->last_line = l.line;
            return;
        }
        split_bars(s, pieces_);
        const auto& pieces = pieces_;
        if (s.find("Metric") != std::string_view::npos && s.find("Cur Usage") != std::string_view::npos) {
            if (!open_) start(l.line);
            read_columns(pieces);
            open_->last_line = l.line;
            return;
        }
        // A value row: the first '|'-terminated piece that is a known label.
        for (std::size_t i = 0; i + 1 < pieces.size(); ++i) {
            if (auto m = match_label(pieces[i])) {
                on_row(l, pieces, i, *m);
                return;
            }
        }
        if (!open_) return;
        if (is_elision(s)) {
            open_->elided = true;
            open_->last_line = l.line;
            warn(l.line, "rows elided ('...'): their values are unknown");
            return;
        }
        if (open_->has_rows && pieces.size() >= 5) {
            open_->last_line = l.line;
            std::string_view first;
            for (const auto& p : pieces)
                if (!trim(p).empty()) {
                    first = trim(p);
                    break;
                }
            warn(l.line, fmt::format("unrecognised row '{}' skipped", first));
            return;
        }
        // Any other line ends the table: torch prints a table as one block of lines.
        if (open_->title || open_->has_rows) {
            finish();
        } else {
            open_.reset();  // a lone '=' border that started nothing
        }
    }

    void read_columns(const std::vector<std::string_view>& pieces) {
        for (std::size_t i = 0; i < pieces.size(); ++i) {
            if (trim(pieces[i]) != "Metric") continue;
            for (std::size_t c = 0; c < 4 && i + 1 + c < pieces.size(); ++c) {
                const auto label = trim(pieces[i + 1 + c]);
                for (std::size_t k = 0; k < 4; ++k)
                    if (label == kColumnLabels[k]) open_->columns[c] = kDefaultColumns[k];
            }
            return;
        }
    }

    void on_row(const TextLine& l, const std::vector<std::string_view>& pieces, std::size_t at, const LabelMatch& m) {
        const RowSpec* spec = m.spec;
        std::string prefix;
        if (spec) {
            const bool duplicate = open_ && std::find(open_->rows_seen.begin(), open_->rows_seen.end(), spec->key) !=
                                                open_->rows_seen.end();
            if (!open_ || duplicate) {
                start(l.line);
                warn(l.line, "table rows without the table header: device, OOMs and retries unknown");
            }
            open_->rows_seen.push_back(spec->key);
            open_->current = spec;
            if (!m.fork.empty() && m.fork != "GPU") {
                std::string word = m.fork;
                for (char& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                open_->forks.insert(word);
            }
            prefix = spec->pooled ? fmt::format("{}.all.", spec->key) : fmt::format("{}.", spec->key);
        } else {
            if (!open_) {
                start(l.line);
                warn(l.line, "table rows without the table header: device, OOMs and retries unknown");
            }
            if (!open_->current || !open_->current->pooled) {
                open_->last_line = l.line;
                warn(l.line, fmt::format("pool row '{}' without its metric row; skipped", trim(pieces[at])));
                return;
            }
            spec = open_->current;
            open_->pool_rows = true;
            pool_seen_.insert(fmt::format("{}/{}", spec->key, m.pool));
            prefix = fmt::format("{}.{}.", spec->key, m.pool);
        }
        open_->has_rows = true;
        open_->last_line = l.line;
        const auto label = trim(pieces[at]);
        std::vector<std::string_view> unreadable;
        for (std::size_t c = 0; c < 4; ++c) {
            const std::size_t index = at + 1 + c;
            // The piece after the last '|' may be a cut cell or a note: never trust it.
            if (index + 1 >= pieces.size()) {
                unreadable.push_back(column_label(open_->columns[c]));
                continue;
            }
            const auto cell = trim(pieces[index]);
            const auto value = spec->size ? parse_size_cell(cell) : parse_count_cell(cell);
            if (!value) {
                warn(l.line,
                     fmt::format("row '{}', {}: cannot read '{}'", label, column_label(open_->columns[c]), cell));
                continue;
            }
            if (spec->size && (ends_with(cell, "KB") || ends_with(cell, "MB") || ends_with(cell, "GB") ||
                               ends_with(cell, "TB") || ends_with(cell, "PB")))
                open_->old_units = true;
            open_->values[prefix + std::string(open_->columns[c])] = clamp_negative(*value, open_->negatives);
        }
        if (!unreadable.empty()) {
            std::string names;
            for (const auto& n : unreadable) names += (names.empty() ? "" : ", ") + std::string(n);
            warn(l.line, fmt::format("row '{}' is cut short: {} unreadable", label, names));
        }
    }

    void finish() {
        if (!open_) return;
        Builder& b = *open_;
        if (!b.title && !b.has_rows) {
            open_.reset();
            return;
        }
        StatsTable& t = b.table;
        auto seen = [&](std::string_view key) {
            return std::find(b.rows_seen.begin(), b.rows_seen.end(), key) != b.rows_seen.end();
        };
        if (!b.has_rows) {
            warn(b.last_line, "table header without any value rows");
        } else if (!b.closed) {
            // Rows expected after the last one read.
            std::string missing;
            std::size_t last = 0;
            for (std::size_t i = 0; i < kRows.size(); ++i)
                if (seen(kRows[i].key)) last = i;
            for (std::size_t i = last + 1; i < kRows.size(); ++i) {
                if (kRows[i].key == "requested_bytes" && (b.old_units || last >= 3)) continue;
                missing += (missing.empty() ? "" : ", ") + std::string(kRows[i].label);
            }
            warn(b.last_line, fmt::format("table starting at line {} is cut short here (no closing border){}", t.line,
                                          missing.empty() ? std::string()
                                                          : "; missing rows (if this torch prints them): " + missing));
        }
        // Gaps among the rows that were read (Requested/Oversize rows are absent in older torch).
        if (b.has_rows && !b.elided) {
            std::size_t last = 0;
            for (std::size_t i = 0; i < kRows.size(); ++i)
                if (seen(kRows[i].key)) last = i;
            std::string gaps;
            for (std::size_t i = 0; i < last; ++i)
                if (!seen(kRows[i].key) && kRows[i].key != "requested_bytes")
                    gaps += (gaps.empty() ? "" : ", ") + std::string(kRows[i].label);
            if (!gaps.empty()) warn(t.line, fmt::format("rows missing from the table: {}", gaps));
        }
        if (b.pool_rows) {
            for (const auto& key : b.rows_seen) {
                const auto* spec = spec_for(key);
                if (!spec || !spec->pooled) continue;
                for (std::string_view pool : {"large_pool", "small_pool"})
                    if (!pool_seen_.count(fmt::format("{}/{}", key, pool)) && !b.elided)
                        warn(t.line, fmt::format("row '{}' lacks its '{}' sub-row", spec->label,
                                                 pool == "large_pool" ? "from large pool" : "from small pool"));
            }
        }
        if (b.negatives) warn(t.line, negative_warning(b.negatives));
        using Generation = TableLayout::Generation;
        TableLayout layout;
        if (seen("requested_bytes"))
            layout.generation = Generation::torch_2_0_or_newer;
        else if (seen("oversize_allocations") || seen("oversize_segments"))
            layout.generation = Generation::torch_1_10_to_1_13;
        else if (b.closed && !b.elided)
            layout.generation = Generation::torch_1_9_or_older;
        layout.abbreviated = b.has_rows && !b.pool_rows;
        layout.cut = !b.closed;
        layout.old_units = b.old_units;
        layout.forks.assign(b.forks.begin(), b.forks.end());
        // cudaMallocAsync keeps only the current/peak byte counters of the `all` rows.
        const auto cur = b.values.find(keys::allocated_current);
        const auto tot = b.values.find(keys::allocated_total);
        if (cur != b.values.end() && tot != b.values.end() && cur->second.low > 0 && tot->second == ByteRange{}) {
            layout.cuda_malloc_async = true;
            warn(t.line,
                 "totals and counts are 0 although memory is allocated (cudaMallocAsync backend?): "
                 "only Cur/Peak of the byte rows are meaningful");
        }
        t.layout = std::move(layout);
        t.stats = StatMap(b.values);
        // One table behind: the last is the caller's, with the file's warning summary.
        if (last_) sink_(std::move(*last_));
        last_ = std::move(t);
        pool_seen_.clear();
        open_.reset();
    }

    std::string_view text_;
    const std::string& file_;
    std::vector<std::string_view> pieces_;  // of the current line
    std::optional<Builder> open_;
    std::set<std::string> pool_seen_;
    const TableSink& sink_;
    std::optional<StatsTable> last_;
    FileWarnings warnings_{file_};
};

}  // namespace

std::optional<StatsTable> find_summary_tables(std::string_view text, const std::string& file, const TableSink& sink) {
    return SummaryReader(text, file, sink).run();
}

}  // namespace memsnap::stats
