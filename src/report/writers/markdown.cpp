// The Markdown writer: any Document, ready to paste into a GitHub issue. Facts as bullets,
// tables as pipe tables, records as a summary table and one <details> block each.
#include "markdown_support.hpp"
#include "values.hpp"
#include "writers.hpp"

#include <fmt/format.h>

#include <utility>

namespace memsnap::report::detail {

namespace {

std::string upper(std::string text) {
    for (char& c : text)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return text;
}

class MarkdownWriter {
  public:
    MarkdownWriter(const RenderOptions& options, const Sink& sink) : options_(options), sink_(sink) {}

    void document(const Document& d) {
        out_ += fmt::format("## {}\n\n", md::html(d.title));
        body(d.root, 3);
        flush();
    }

  private:
    const RenderOptions& options_;
    const Sink& sink_;
    std::string out_;
    bool flushed_ = false, flushed_blank_ = false;  // what was handed to sink_ ended a block
    int aside_ = 0;                                 // writing a record's details aside: kept

    void flush() {
        if (out_.empty() || aside_ > 0) return;
        flushed_ = true;
        flushed_blank_ = out_.ends_with("\n\n");
        sink_(out_);
        out_.clear();
    }

    // A table starts a block of its own: right after a list item it would be read as more of
    // the item's text, and after </details> as more of the HTML.
    void blank_line() {
        if (out_.empty()) {
            if (flushed_ && !flushed_blank_) out_ += "\n";
        } else if (!out_.ends_with("\n\n")) {
            out_ += out_.ends_with('\n') ? "\n" : "\n\n";
        }
    }

    static std::string value(const Value& v) {
        switch (v.kind) {
            case Value::Kind::frame:
                return md::code(for_people(v));
            case Value::Kind::verdict:
                return "**" + md::html(upper(for_people(v))) + "**";
            case Value::Kind::word:
                return md::code(for_people(v));
            default:
                return md::html(for_people(v));
        }
    }

    static std::string fact_value(const Node& n) {
        if (n.kind == Node::Kind::value) return value(n.value) + (n.note.empty() ? "" : " (" + md::html(n.note) + ")");
        std::string out;
        for (std::size_t i = 0; i < n.size(); ++i) {
            const Node item = n.item(i);
            if (!for_people(item)) continue;
            if (!out.empty()) out += ", ";
            out += n.layout == Layout::line && !item.label.empty() ? md::html(label_of(item)) + " " + value(item.value)
                                                                   : value(item.value);
        }
        return out.empty() ? md::html(n.note) : out;
    }

    static std::string headline(const Node& n) {
        std::string out;
        for (const auto& item : n.items)
            if (item.headline && for_people(item)) out += (out.empty() ? "" : " — ") + fact_value(item);
        return out;
    }

    // Plain words for <summary>, where Markdown is not read.
    static std::string summary(const Node& n) {
        std::string out;
        for (const auto& item : n.items)
            if (item.headline && for_people(item) && item.kind == Node::Kind::value)
                out += (out.empty() ? "" : " — ") + md::html(for_people(item.value));
        return out;
    }

    // A table of the records' headlines, before their details.
    void headline_table(const Node& list) {
        std::vector<std::string> keys;
        std::string head = "|", rule = "|";
        const Node first = list.item(0);
        for (const auto& cell : first.items)
            if (cell.headline && for_people(cell) && cell.kind == Node::Kind::value) {
                keys.push_back(cell.key);
                head += " " + md::cell(label_of(cell)) + " |";
                rule += is_numeric(cell.value) ? "---:|" : "---|";
            }
        blank_line();
        out_ += head + "\n" + rule + "\n";
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (!for_people(item)) continue;
            std::string line = "|";
            for (const auto& key : keys) {
                std::string text;
                for (const auto& c : item.items)
                    if (c.key == key && c.kind == Node::Kind::value) text = value(c.value);
                line += " " + md::cell(text) + " |";
            }
            out_ += line + "\n";
        }
    }

    void heading(const Node& n, int level) {
        if (n.label.empty()) return;
        const auto head = n.kind == Node::Kind::object ? headline(n) : std::string();
        out_ += fmt::format("\n{} {}{}\n\n", std::string(static_cast<std::size_t>(std::min(level, 6)), '#'),
                            md::html(n.label), head.empty() ? "" : ": " + head);
    }

    void body(const Node& object, int level) {
        for (const auto& item : object.items) {
            if (!for_people(item) || (item.headline && !object.label.empty())) continue;
            if (item.kind == Node::Kind::value || item.layout == Layout::line || item.layout == Layout::inline_list) {
                out_ += fmt::format("- **{}**: {}\n", md::html(label_of(item)), fact_value(item));
                continue;
            }
            node(item, level);
        }
    }

    void node(const Node& n, int level) {
        switch (n.layout) {
            case Layout::facts:
            case Layout::section:
                heading(n, level);
                if (n.kind == Node::Kind::list) {
                    for (std::size_t i = 0; i < n.size(); ++i)
                        if (const Node item = n.item(i); for_people(item)) node(item, level + 1);
                    return;
                }
                return body(n, level + 1);
            case Layout::table:
                return table(n, level);
            case Layout::records:
                return records(n, level);
            case Layout::bullets:
                return bullets(n);
            case Layout::stack:
                return stack(n);
            case Layout::line:
            case Layout::inline_list:
                out_ += fmt::format("- **{}**: {}\n", md::html(label_of(n)), fact_value(n));
                return;
            case Layout::hidden:
                return;
        }
    }

    void bullets(const Node& list) {
        if (list.size() == 0) return;
        if (!list.label.empty()) out_ += fmt::format("\n**{}**\n\n", md::html(list.label));
        for (std::size_t i = 0; i < list.size(); ++i)
            if (const Node item = list.item(i); for_people(item)) out_ += "- " + fact_value(item) + "\n";
    }

    void stack(const Node& list) {
        std::string body;
        const auto gap = [&](std::size_t frames) {
            if (frames > 0) body += python_frames_left_out(frames) + "\n";
        };
        const auto lines = stack_lines(list, options_.cpp_frames, 0);
        for (const auto& line : lines.lines) {
            gap(line.gap_before);
            body += for_people(list.item(line.item).value) + "\n";
        }
        gap(lines.gap_at_end);
        if (lines.cpp_hidden > 0) body += cpp_frames_left_out(lines.cpp_hidden) + "\n";
        out_ += fmt::format("\n{}:\n\n{}", md::html(label_of(list)), md::fence(body.empty() ? "(no frames)\n" : body));
    }

    void table(const Node& list, int level) {
        heading(list, level);
        // Rows are written as they are made: a long list is never held as nodes.
        std::vector<std::string> keys;
        bool any = false;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const auto row = list.item(i);
            if (!for_people(row)) continue;
            if (!std::exchange(any, true)) {
                std::string head = "|", rule = "|";
                for (const auto& cell : row.items)
                    if (for_people(cell) && cell.kind == Node::Kind::value) {
                        keys.push_back(cell.key);
                        head += " " + md::cell(label_of(cell)) + " |";
                        rule += is_numeric(cell.value) ? "---:|" : "---|";
                    }
                blank_line();
                out_ += head + "\n" + rule + "\n";
            }
            std::string line = "|";
            for (const auto& key : keys) {
                std::string cell;
                for (const auto& c : row.items)
                    if (c.key == key && c.kind == Node::Kind::value) cell = value(c.value);
                line += " " + md::cell(cell) + " |";
            }
            out_ += line + "\n";
        }
        if (!any && !list.note.empty()) out_ += md::html(list.note) + "\n";
    }

    void records(const Node& list, int level) {
        heading(list, level);
        if (list.size() == 0 && !list.note.empty()) out_ += md::html(list.note) + "\n";
        if (list.size() > 0) headline_table(list);
        for (std::size_t i = 0; i < list.size(); ++i) {
            const Node item = list.item(i);
            if (!for_people(item)) continue;
            Node details = Node::object("", Layout::facts);
            for (const auto& field : item.items)
                if (!field.headline) details.items.push_back(field);
            // Written aside first: a record whose table row says all gets no empty <details>.
            std::string written;
            std::swap(written, out_);
            ++aside_;
            body(details, level + 1);
            --aside_;
            std::swap(written, out_);
            if (written.find_first_not_of(" \n") != std::string::npos)
                out_ += fmt::format("\n<details><summary>{}</summary>\n\n{}\n</details>\n", summary(item), written);
            if (i % 64 == 63) flush();
        }
    }
};

}  // namespace

void write_markdown(const Document& document, const RenderOptions& options, const Sink& sink) {
    MarkdownWriter(options, sink).document(document);
}

}  // namespace memsnap::report::detail
