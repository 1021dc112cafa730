// The CSV writer: the document's primary list, one row per item (RFC 4180 quoting, LF line
// ends). A row holds the item's values; a frame is three columns (filename, line, name), a
// range two (_low, _high), lists are left out. Items of an enclosing list (a device of a summary diff) lend their
// values to the rows they hold; a nested object's values are columns of their own names. A cell that a spreadsheet
// would run as a formula gets a leading quote (OWASP).
#include "values.hpp"
#include "writers.hpp"

#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <cmath>

namespace memsnap::report::detail {

namespace {

using Row = std::vector<std::pair<std::string, std::string>>;  // (column, cell)

std::string fixed(double value, int decimals) {
    if (!std::isfinite(value)) return "";
    std::string out = fmt::format("{:.{}f}", value, decimals);
    if (out.find_first_not_of("-0.") == std::string::npos && out.front() == '-') out.erase(0, 1);
    return out;
}

bool plain_number(std::string_view text) {
    if (text.empty()) return false;
    std::size_t i = text.front() == '-' || text.front() == '+' ? 1 : 0;
    bool digits = false, dot = false;
    for (; i < text.size(); ++i) {
        if (text[i] >= '0' && text[i] <= '9')
            digits = true;
        else if (text[i] == '.' && !dot)
            dot = true;
        else
            return false;
    }
    return digits;
}

std::string field(std::string_view raw) {
    std::string text = util::printable(raw);
    if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos &&
        !plain_number(text))
        text.insert(text.begin(), '\'');
    if (text.find_first_of(",\"") == std::string::npos) return text;
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string cell(const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::none:
            return "";
        case K::flag:
            return v.integer ? "true" : "false";
        case K::count:
        case K::signed_count:
        case K::bytes:
        case K::signed_bytes:
            return fmt::format("{}", v.integer);
        case K::number:
            return fixed(v.real, v.decimals);
        case K::rate:
            return fixed(v.real, 3);
        case K::share:
            return fixed(v.real, 6);
        case K::seconds:
            return fixed(v.real, 6);
        default:
            return field(v.text);
    }
}

void add_value(Row& row, const std::string& key, const Value& v) {
    if (v.kind == Value::Kind::numbers) return;  // lists are left out
    if (v.kind == Value::Kind::frame) {
        row.emplace_back("filename", field(v.text));
        row.emplace_back("line", fmt::format("{}", v.integer));
        row.emplace_back("name", field(v.name));
    } else if (v.kind == Value::Kind::range || v.kind == Value::Kind::count_range) {
        row.emplace_back(key + "_low", fmt::format("{}", v.integer));
        row.emplace_back(key + "_high", fmt::format("{}", v.high));
    } else {
        row.emplace_back(key, cell(v));
    }
}

void add_fields(Row& row, const Node& object, const std::string& prefix, bool nested) {
    for (const auto& f : object.items) {
        if (!for_machines(f)) continue;
        if (f.kind == Node::Kind::value)
            add_value(row, prefix + f.key, f.value);
        else if (f.kind == Node::Kind::object && (f.merge || !nested))
            add_fields(row, f, prefix, true);
    }
}

class CsvWriter {
  public:
    explicit CsvWriter(const Sink& sink) : sink_(sink) {}

    bool find(const Node& node, const Row& context) {
        for (const auto& child : node.items) {
            if (!for_machines(child)) continue;
            if (child.kind == Node::Kind::list && child.primary) {
                rows(child, context);
                return true;
            }
            if (child.kind == Node::Kind::object && find(child, context)) return true;
            if (child.kind == Node::Kind::list && !child.make) {
                bool found = false;
                for (const auto& item : child.items) {
                    if (item.kind != Node::Kind::object || !for_machines(item)) continue;
                    Row inner = context;
                    for (const auto& f : item.items)
                        if (f.kind == Node::Kind::value && for_machines(f)) add_value(inner, f.key, f.value);
                    found = find(item, inner) || found;
                }
                if (found) return true;
            }
        }
        return false;
    }

    void finish() { sink_(out_); }

  private:
    const Sink& sink_;
    std::string out_;
    bool header_written_ = false;

    void line(const Row& row, bool header) {
        std::string text;
        for (std::size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + (header ? row[i].first : row[i].second);
        out_ += text + "\n";
    }

    void rows(const Node& list, const Row& context) {
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (!for_machines(item)) continue;
            Row row = context;
            add_fields(row, item, "", false);
            if (!header_written_) line(row, true);
            header_written_ = true;
            line(row, false);
            if (list.make && i % 256 == 255) {
                sink_(out_);
                out_.clear();
            }
        }
        if (!header_written_ && list.prototype) {
            Row row = context;
            add_fields(row, *list.prototype, "", false);
            line(row, true);
            header_written_ = true;
        }
    }
};

}  // namespace

void write_csv(const Document& document, const Sink& sink) {
    CsvWriter writer(sink);
    if (!writer.find(document.root, {}))
        throw usage_error(fmt::format("--format csv: a {} has no list of rows; use json", document.kind));
    writer.finish();
}

}  // namespace memsnap::report::detail
