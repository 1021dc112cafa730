#include "stats_dict.hpp"

#include "cells.hpp"
#include "text_lines.hpp"

#include <memsnap/limits.hpp>
#include <memsnap/stats/keys.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>

namespace memsnap::stats {

namespace {

using keys::metrics;
using keys::pools;
using keys::scalars;
using keys::stat_arrays;

template <std::size_t N>
bool one_of(const std::array<std::string_view, N>& set, std::string_view s) {
    return std::find(set.begin(), set.end(), s) != set.end();
}

std::vector<std::string_view> split_dots(std::string_view key) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true) {
        const auto dot = key.find('.', start);
        out.push_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) return out;
        start = dot + 1;
    }
}

// How a flattened key splits into a wrapper prefix and a memory_stats key.
struct StatKey {
    std::size_t first = 0;  // index of the first segment of the stat key
    bool array = false;     // a stat array or oversize entry (what makes a dict a stats dict)
};

std::optional<StatKey> classify(const std::vector<std::string_view>& segs) {
    for (std::size_t j = 0; j < segs.size(); ++j) {
        const auto rest = segs.size() - j;
        if (one_of(stat_arrays, segs[j]) && rest == 3 && one_of(pools, segs[j + 1]) && one_of(metrics, segs[j + 2]))
            return StatKey{j, true};
        if (one_of(keys::oversize, segs[j]) && rest == 2 && one_of(metrics, segs[j + 1])) return StatKey{j, true};
        if (one_of(scalars, segs[j]) && rest == 1) return StatKey{j, false};
        if (segs[j] == "reserved_bytes_by_private_pools" && rest == 4 && one_of(pools, segs[j + 2]) &&
            one_of(metrics, segs[j + 3]))
            return StatKey{j, false};
    }
    return std::nullopt;
}

// The stats of one wrapper prefix ("" or "cuda:0", ...), as the parser meets them.
struct Group {
    std::string prefix;
    StatsTable table;
    std::map<std::string, ByteRange, std::less<>> values;  // table.stats, once read
    bool array = false;                                    // holds a stat array or oversize entry: a memory_stats dict
    bool nested = false;  // keys came nested ({"allocated_bytes": {"all": ...}}), not flat
    std::size_t negatives = 0;
};

// Recursive-descent reader for the JSON / Python-literal subset memory_stats dumps use. Each
// integer is filed under its group as it is read: the dotted path is one buffer that grows
// and shrinks with the nesting, and long paths (no stats key is long) are not looked at, so
// that the work stays linear in the text.
class LiteralParser {
  public:
    LiteralParser(std::string_view text, std::size_t pos) : s_(text), pos_(pos) {}

    bool parse() { return value(true, 0); }
    std::size_t pos() const { return pos_; }
    bool python() const { return python_; }
    std::vector<Group> groups;
    std::vector<std::string> too_big;  // keys of integers that do not fit int64 (the first few)

  private:
    static constexpr int kMaxDepth = static_cast<int>(limits::stats_dict_depth);
    static constexpr std::size_t kMaxPath = limits::stats_key_bytes;
    static constexpr std::size_t kMaxTooBig = 16;

    void ws() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool eat(char c) {
        ws();
        if (pos_ < s_.size() && s_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }
    bool peek(char c) {
        ws();
        return pos_ < s_.size() && s_[pos_] == c;
    }

    bool string(std::string& out) {
        ws();
        if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) return false;
        const char quote = s_[pos_++];
        if (quote == '\'') python_ = true;
        out.clear();
        while (pos_ < s_.size() && s_[pos_] != quote) {
            if (s_[pos_] == '\n') return false;
            if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
            out += s_[pos_++];
        }
        if (pos_ >= s_.size()) return false;
        ++pos_;
        return true;
    }

    // A dict key: string, int, or a tuple of those (private-pool ids become "a_b").
    bool key(std::string& out, int depth) {
        if (depth > kMaxDepth) return false;
        ws();
        if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '\'')) return string(out);
        if (eat('(')) {
            out.clear();
            while (!eat(')')) {
                std::string part;
                if (!key(part, depth + 1)) return false;
                out += (out.empty() ? "" : "_") + part;
                eat(',');
            }
            return true;
        }
        const std::size_t start = pos_;
        if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
        if (pos_ == start) return false;
        out = std::string(s_.substr(start, pos_ - start));
        return true;
    }

    // Files an integer under the current path, when the path ends in a memory_stats key (its
    // last four segments at most: only those are looked at).
    void record(std::int64_t v) {
        if (path_.empty() || path_.size() > kMaxPath) return;
        std::size_t tail = path_.size();
        for (int dots = 0; dots < 4 && tail != std::string::npos; ++dots)
            tail = tail == 0 ? std::string::npos : path_.rfind('.', tail - 1);
        const std::size_t start = tail == std::string::npos ? 0 : tail + 1;
        const auto segs = split_dots(std::string_view(path_).substr(start));
        const auto k = classify(segs);
        if (!k) return;
        std::size_t stat_start = start;
        for (std::size_t i = 0; i < k->first; ++i) stat_start += segs[i].size() + 1;
        const std::string prefix = stat_start == 0 ? std::string() : path_.substr(0, stat_start - 1);
        const std::string stat = path_.substr(stat_start);
        const auto [at, inserted] = group_of_.try_emplace(prefix, groups.size());
        if (inserted) groups.push_back({prefix, {}, {}, false, false, 0});
        Group& g = groups[at->second];
        g.array = g.array || k->array;
        g.nested = g.nested || last_key_ != stat;
        // max_split_size -1 is torch's "no limit", not a size.
        const auto value =
            stat == "max_split_size" ? ByteRange::exact(v) : clamp_negative(ByteRange::exact(v), g.negatives);
        if (stat == keys::num_ooms)
            g.table.num_ooms = value;
        else if (stat == keys::num_alloc_retries)
            g.table.num_alloc_retries = value;
        else
            g.values[stat] = value;
    }

    bool number(bool recorded) {
        const std::size_t start = pos_;
        if (s_[pos_] == '-') ++pos_;
        bool integer = true;
        while (pos_ < s_.size()) {
            const char c = s_[pos_];
            if (std::isdigit(static_cast<unsigned char>(c))) {
                ++pos_;
            } else if (c == '.' || c == 'e' || c == 'E' ||
                       ((c == '+' || c == '-') && pos_ > start && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))) {
                integer = false;
                ++pos_;
            } else {
                break;
            }
        }
        const auto text = s_.substr(start, pos_ - start);
        if (text.empty() || text == "-") return false;
        if (!integer || !recorded || path_.empty()) return true;
        std::int64_t v = 0;
        auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc::result_out_of_range) {
            if (too_big.size() < kMaxTooBig) too_big.push_back(path_.substr(0, kMaxPath));
            return true;
        }
        if (ec != std::errc() || ptr != text.data() + text.size()) return false;
        record(v);
        return true;
    }

    // The value of key `k`, with the path one segment longer while it is read.
    bool entry(std::string& k, bool recorded, int depth) {
        const std::size_t mark = path_.size();
        if (!path_.empty()) path_ += '.';
        path_ += k;
        std::swap(last_key_, k);
        const bool ok = value(recorded, depth + 1);
        std::swap(last_key_, k);
        path_.resize(mark);
        return ok;
    }

    bool dict_entries(bool recorded, int depth, char close) {
        if (eat(close)) return true;
        while (true) {
            std::string k;
            if (!key(k, depth) || !eat(':')) return false;
            if (!entry(k, recorded, depth)) return false;
            if (eat(close)) return true;
            if (!eat(',')) return false;
            if (eat(close)) return true;  // trailing comma (Python)
        }
    }

    // OrderedDict([('k', v), ...]) — the repr of the flat memory_stats() result; Python >= 3.12
    // prints OrderedDict({'k': v, ...}) instead.
    bool ordered_dict(bool recorded, int depth) {
        python_ = true;
        if (!eat('(')) return false;
        if (eat(')')) return true;
        if (eat('{')) return dict_entries(recorded, depth, '}') && eat(')');
        if (!eat('[')) return false;
        while (!eat(']')) {
            std::string k;
            if (!eat('(') || !key(k, depth) || !eat(',')) return false;
            if (!entry(k, recorded, depth)) return false;
            if (!eat(')')) return false;
            if (!eat(',') && !peek(']')) return false;
        }
        return eat(')');
    }

    // Values inside lists and tuples are not stats.
    bool sequence(char close, int depth) {
        if (eat(close)) return true;
        while (true) {
            if (!value(false, depth + 1)) return false;
            if (eat(close)) return true;
            if (!eat(',')) return false;
            if (eat(close)) return true;
        }
    }

    bool value(bool recorded, int depth) {
        if (depth > kMaxDepth) return false;
        ws();
        if (pos_ >= s_.size()) return false;
        const char c = s_[pos_];
        if (c == '{') {
            ++pos_;
            return dict_entries(recorded, depth, '}');
        }
        if (c == '[') {
            ++pos_;
            return sequence(']', depth);
        }
        if (c == '(') {
            ++pos_;
            return sequence(')', depth);
        }
        if (c == '"' || c == '\'') {
            std::string ignored;
            return string(ignored);
        }
        if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number(recorded);
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            const std::size_t start = pos_;
            while (pos_ < s_.size() &&
                   (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
                ++pos_;
            const auto word = s_.substr(start, pos_ - start);
            if (word == "OrderedDict" || word == "collections.OrderedDict") return ordered_dict(recorded, depth);
            if (word == "True" || word == "False" || word == "None") {
                python_ = true;
                return true;
            }
            return word == "true" || word == "false" || word == "null" || word == "nan" || word == "inf";
        }
        return false;
    }

    std::string_view s_;
    std::size_t pos_;
    bool python_ = false;
    std::string path_;                             // dotted keys from the dict where parsing began
    std::string last_key_;                         // the innermost key
    std::map<std::string, std::size_t> group_of_;  // prefix -> index in groups
};

// Where dicts may start: '{' or "OrderedDict(". Each kind's next position is remembered, so
// a file without one of them is searched for it once, not once per candidate.
class Starts {
  public:
    explicit Starts(std::string_view text) : text_(text) {}
    std::size_t next(std::size_t from) {
        if (!searched_ || brace_ < from) brace_ = text_.find('{', from);
        if (!searched_ || ordered_ < from) ordered_ = text_.find("OrderedDict(", from);
        searched_ = true;
        return std::min(brace_, ordered_);
    }

  private:
    std::string_view text_;
    std::size_t brace_ = 0, ordered_ = 0;  // the next of each at or after the last `from`
    bool searched_ = false;
};

std::optional<int> trailing_int(std::string_view prefix) {
    std::size_t end = prefix.size();
    std::size_t begin = end;
    while (begin > 0 && std::isdigit(static_cast<unsigned char>(prefix[begin - 1]))) --begin;
    if (begin == end || end - begin > 6) return std::nullopt;
    int v = 0;
    std::from_chars(prefix.data() + begin, prefix.data() + end, v);
    return v;
}

}  // namespace

std::deque<StatsTable> find_stats_dicts(std::string_view text, const std::string& file) {
    std::deque<StatsTable> out;
    FileWarnings warnings(file);
    Starts starts(text);
    LineCounter lines(text);
    std::size_t pos = starts.next(0);
    while (pos < text.size()) {
        LiteralParser parser(text, pos);
        const bool ok = parser.parse();
        auto& groups = parser.groups;
        const std::size_t line = lines.line_of(pos);
        for (auto& g : groups) {
            if (!g.array) continue;
            StatsTable& t = g.table;
            t.stats = StatMap(g.values);
            t.line = line;
            if (!g.prefix.empty()) t.device = trailing_int(g.prefix);
            t.layout.generation = TableLayout::Generation::memory_stats;
            t.layout.nested = g.nested;
            t.layout.python_repr = parser.python();
            if (!ok)
                warnings.add(t.warnings, lines.line_of(parser.pos()),
                             fmt::format("memory_stats dict starting at line {} cannot be read past here; kept the {} "
                                         "values read before",
                                         line, t.stats.size()));
            if (g.negatives) warnings.add(t.warnings, line, negative_warning(g.negatives));
            for (const auto& big : parser.too_big)
                if (big.find("max_split_size") == std::string::npos)
                    warnings.add(t.warnings, line, fmt::format("value of '{}' does not fit 64 bits; skipped", big));
            out.push_back(std::move(t));
        }
        // Past what this attempt read, found or not: whatever it read was read once, and a
        // dict inside a broken one has been read with it (its values are kept).
        pos = starts.next(std::max(parser.pos(), pos + 1));
    }
    if (const auto more = warnings.summary(); more && !out.empty()) out.back().warnings.push_back(*more);
    return out;
}

}  // namespace memsnap::stats
