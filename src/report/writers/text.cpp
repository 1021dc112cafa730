// The text writer: any Document for a terminal. Facts as aligned "label  value" lines, tables
// with aligned columns, records as a headline and their details, bullets and stacks indented
// under the node that holds them.
#include "../format.hpp"
#include "values.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report::detail {

namespace {

constexpr std::size_t kMaxLabelWidth = 32;
constexpr std::size_t kMaxCellWidth = 40;
constexpr std::size_t kStackPythonFrames = 8;

// Display width: UTF-8 continuation bytes take no column.
std::size_t width(std::string_view text) {
    std::size_t n = 0;
    for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

std::string pad_right(std::string text, std::size_t to) {
    const auto w = width(text);
    if (w < to) text.append(to - w, ' ');
    return text;
}

std::string pad_left(const std::string& text, std::size_t to) {
    const auto w = width(text);
    return w < to ? std::string(to - w, ' ') + text : text;
}

constexpr std::size_t kFlushBytes = 64 * 1024;

class TextWriter {
  public:
    TextWriter(const RenderOptions& options, const Sink& sink)
        : style_{options.color}, options_(options), sink_(sink) {}

    void document(const Document& d) {
        out_ += style_.bold(util::printable(d.title)) + "\n";
        body(d.root, 1);
        flush();
    }

  private:
    Style style_;
    const RenderOptions& options_;
    const Sink& sink_;
    std::string out_;
    int sections_ = 0;  // titled blocks the writer is inside

    void flush() {
        sink_(out_);
        out_.clear();
    }

    static std::string indent(int depth) { return std::string(static_cast<std::size_t>(2 * depth), ' '); }

    std::string shown(const Value& v) const {
        if (v.kind == Value::Kind::verdict) return style_.verdict(v.text);
        return for_people(v);
    }

    // The nodes of an object in order: runs of values as aligned facts, the rest by layout.
    void body(const Node& object, int depth) {
        std::vector<const Node*> facts;
        const auto flush_facts = [&] {
            fact_lines(facts, depth);
            facts.clear();
        };
        for (const auto& item : object.items) {
            if (!for_people(item) || (item.headline && !object.label.empty())) continue;
            if (item.kind == Node::Kind::list && item.size() == 0 && item.note.empty() && item.label.empty()) continue;
            if (item.layout == Layout::bullets && item.size() == 0 && item.note.empty()) continue;
            if (item.kind == Node::Kind::value || item.layout == Layout::inline_list || item.layout == Layout::line) {
                facts.push_back(&item);
                continue;
            }
            flush_facts();
            // A titled block inside a titled block is indented under it.
            const bool nested = !object.label.empty() && item.kind == Node::Kind::object && !item.label.empty();
            node(item, nested ? depth + 1 : depth);
        }
        flush_facts();
    }

    std::string fact_value(const Node& n) const {
        if (n.kind == Node::Kind::value) return shown(n.value);
        std::string out;
        for (std::size_t i = 0; i < n.size(); ++i) {
            const Node item = n.item(i);
            if (!for_people(item)) continue;
            if (!out.empty()) out += ", ";
            out += n.layout == Layout::line && item.kind == Node::Kind::value && !item.label.empty()
                       ? fmt::format("{} {}", label_of(item), shown(item.value))
                       : shown(item.value);
        }
        return out.empty() && !n.note.empty() ? n.note : out;
    }

    // Labels aligned; numbers right-aligned among themselves.
    void fact_lines(const std::vector<const Node*>& facts, int depth) {
        std::size_t label_width = 0, number_width = 0;
        const auto numeric = [](const Node* f) { return f->kind == Node::Kind::value && is_numeric(f->value); };
        for (const auto* f : facts) {
            label_width = std::max(label_width, std::min(kMaxLabelWidth, width(label_of(*f))));
            if (numeric(f)) number_width = std::max(number_width, width(fact_value(*f)));
        }
        for (const auto* f : facts) {
            const auto value = numeric(f) ? pad_left(fact_value(*f), number_width) : fact_value(*f);
            std::string line = indent(depth) + pad_right(label_of(*f), label_width) + "  " + value;
            if (f->kind == Node::Kind::value && !f->note.empty()) line += "  " + f->note;
            out_ += line + "\n";
        }
    }

    // A section's title, and after it the values of its headline fields.
    void heading(const Node& n, int depth) {
        if (n.label.empty()) return;
        std::string head;
        if (n.kind == Node::Kind::object)
            for (const auto& item : n.items)
                if (item.headline && for_people(item)) head += (head.empty() ? "" : "  ") + fact_value(item);
        out_ +=
            "\n" + indent(depth - 1) + style_.bold(util::printable(n.label)) + (head.empty() ? "" : ": " + head) + "\n";
    }

    void node(const Node& n, int depth) {
        switch (n.layout) {
            case Layout::facts:
            case Layout::section: {
                heading(n, depth);
                sections_ += n.label.empty() ? 0 : 1;
                if (n.kind == Node::Kind::list)
                    items(n, depth);
                else
                    body(n, depth);
                sections_ -= n.label.empty() ? 0 : 1;
                return;
            }
            case Layout::table:
                return table(n, depth);
            case Layout::records:
                return records(n, depth);
            case Layout::bullets:
                return bullets(n, depth);
            case Layout::stack:
                return stack(n, depth);
            case Layout::line:
            case Layout::inline_list:
                return fact_lines({&n}, depth);
            case Layout::hidden:
                return;
        }
    }

    void items(const Node& list, int depth) {
        if (list.size() == 0 && !list.note.empty()) out_ += indent(depth) + list.note + "\n";
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (!for_people(item)) continue;
            if (item.kind == Node::Kind::value)
                out_ += indent(depth) + shown(item.value) + "\n";
            else
                node(item, depth);
        }
    }

    // At the top, a titled block; deeper, "label:" and the items under it.
    void bullets(const Node& list, int depth) {
        if (list.size() == 0 && list.note.empty()) return;
        int inner = depth;
        if (!list.label.empty() && depth <= 1 && sections_ == 0) {
            heading(list, depth);
        } else if (!list.label.empty()) {
            out_ += indent(depth) + util::printable(list.label) + ":\n";
            inner = depth + 1;
        }
        if (list.size() == 0) out_ += indent(inner) + list.note + "\n";
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (for_people(item)) out_ += indent(inner) + "- " + fact_value(item) + "\n";
        }
    }

    // Columns: the people's value fields of the first row.
    void table(const Node& list, int depth) {
        heading(list, depth);
        if (list.size() == 0) {
            if (!list.note.empty()) out_ += indent(depth) + list.note + "\n";
            return;
        }
        // Rows become their cells' text as they are made: a long list is never held as nodes.
        std::vector<std::string> keys;
        std::vector<std::string> header;
        std::vector<std::vector<std::string>> cells;
        std::vector<bool> numeric;
        std::vector<std::size_t> widths;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto row = list.item(i);
            if (!for_people(row)) continue;
            if (cells.empty()) {
                for (const auto& cell : row.items)
                    if (for_people(cell) && cell.kind == Node::Kind::value) {
                        keys.push_back(cell.key);
                        header.push_back(label_of(cell));
                        widths.push_back(width(header.back()));
                    }
                numeric.assign(keys.size(), false);
            }
            auto& texts = cells.emplace_back(keys.size());
            for (const auto& cell : row.items) {
                const auto at = std::find(keys.begin(), keys.end(), cell.key);
                if (at == keys.end() || cell.kind != Node::Kind::value) continue;
                const auto c = static_cast<std::size_t>(at - keys.begin());
                texts[c] = for_people(cell.value);
                numeric[c] = numeric[c] || is_numeric(cell.value);
                widths[c] = std::max(widths[c], std::min(kMaxCellWidth, width(texts[c])));
            }
        }
        if (cells.empty()) return;
        // Straight into the output: a long table's lines are not copied once more each.
        const auto line = [&](const std::vector<std::string>& row) {
            const std::size_t start = out_.size();
            out_ += indent(depth);
            for (std::size_t c = 0; c < row.size(); ++c) {
                const bool last = c + 1 == row.size();
                if (c > 0) out_ += "  ";
                out_ += numeric[c] ? pad_left(row[c], widths[c]) : last ? row[c] : pad_right(row[c], widths[c]);
            }
            while (out_.size() > start && out_.back() == ' ') out_.pop_back();
            out_ += '\n';
            // A table of a long series runs to tens of MB: written as it grows, not held whole.
            if (out_.size() >= kFlushBytes) flush();
        };
        line(header);
        for (const auto& row : cells) line(row);
    }

    std::string headline_cell(const Node& cell) const {
        const auto text = shown(cell.value);
        using K = Value::Kind;
        if (cell.key == "rank") return pad_right("#" + text, 4);
        switch (cell.value.kind) {
            case K::rate:
                return pad_left(text, 18);
            case K::count:
                return cell.value.unit.empty() ? text : pad_left(text, 16);
            case K::bytes:
            case K::signed_bytes:
                return pad_left(text, 12);
            case K::verdict:
                return pad_right(text, 13 + (text.size() - width(for_people(cell.value))));
            case K::word:
                return "[" + text + "]";
            default:
                return text;
        }
    }

    void records(const Node& list, int depth) {
        heading(list, depth);
        if (list.size() == 0 && !list.note.empty()) out_ += indent(depth) + list.note + "\n";
        bool spaced = false;  // records with details are set apart by a blank line
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (!for_people(item)) continue;
            std::string head;
            Node details = Node::object("", Layout::facts);
            for (const auto& field : item.items) {
                if (!for_people(field)) continue;
                if (field.headline && field.kind == Node::Kind::value) {
                    head += (head.empty() ? "" : "  ") + headline_cell(field);
                } else {
                    details.items.push_back(field);
                }
            }
            while (!head.empty() && head.back() == ' ') head.pop_back();
            const bool detailed =
                std::any_of(details.items.begin(), details.items.end(), [](const Node& n) { return for_people(n); });
            if (!head.empty()) out_ += (i && (spaced || detailed) ? "\n" : "") + indent(depth) + head + "\n";
            spaced = detailed;
            body(details, depth + 3);
            if (i % 64 == 63) flush();  // long lists are written as they are made
        }
    }

    void stack(const Node& list, int depth) {
        out_ += indent(depth) + util::printable(label_of(list)) + ":\n";
        if (list.size() == 0) out_ += indent(depth + 1) + (list.note.empty() ? "(no frames)" : list.note) + "\n";
        const auto gap = [&](std::size_t frames) {
            if (frames > 0) out_ += indent(depth + 1) + python_frames_left_out(frames) + "\n";
        };
        const auto shown_lines = stack_lines(list, options_.cpp_frames, kStackPythonFrames);
        for (const auto& line : shown_lines.lines) {
            gap(line.gap_before);
            out_ += indent(depth + 1) + shown(list.item(line.item).value) + "\n";
        }
        gap(shown_lines.gap_at_end);
        if (shown_lines.cpp_hidden > 0) out_ += indent(depth + 1) + cpp_frames_left_out(shown_lines.cpp_hidden) + "\n";
    }
};

}  // namespace

void write_text(const Document& document, const RenderOptions& options, const Sink& sink) {
    TextWriter(options, sink).document(document);
}

}  // namespace memsnap::report::detail
