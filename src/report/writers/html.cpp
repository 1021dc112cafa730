// The HTML writer: any Document as one self-contained page, its pictures (SVG) inline. No
// script, font, style sheet or image is loaded from anywhere, and a Content-Security-Policy
// says so to the browser. Facts as a table, sections as headings, records in <details>.
#include "../pictures/profile_support.hpp"
#include "../view/view_data.hpp"
#include "values.hpp"
#include "writers.hpp"

#include <memsnap/limits.hpp>

#include <fmt/format.h>

#include <utility>

namespace memsnap::report::detail {

namespace {

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;max-width:1240px;overflow-wrap:anywhere}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}"
    "table{border-collapse:collapse;font-size:13px}td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:left;"
    "vertical-align:top}td.n{text-align:right;font-family:monospace}code,pre{font-family:monospace;font-size:12px}"
    "pre{white-space:pre-wrap}"
    ".verdict{font-weight:bold;padding:2px 8px;border-radius:4px;background:#eee}"
    ".leak{background:#f4c7c3}.stable,.shrink,.freed{background:#cde8cd}"
    "details{margin:2px 0}summary{cursor:pointer}svg{max-width:100%;height:auto}";

// A page stays under 32 MiB whatever the input, so that a browser opens it: pictures keep to
// their own budget (24 MiB), and lists stop here with a line saying how many rows are left.
constexpr std::size_t kMaxPageBytes = limits::html_page_bytes;

// Sentences mark code with backticks, as Markdown does: escaped text with each pair of
// backticks around some text made a <code> span; an unpaired backtick stays as it is.
std::string code_spans(const std::string& escaped) {
    std::string out;
    std::size_t at = 0;
    while (at < escaped.size()) {
        const auto open = escaped.find('`', at);
        const auto close = open == std::string::npos ? std::string::npos : escaped.find('`', open + 1);
        if (close == std::string::npos) break;
        if (close == open + 1) {  // `` encloses nothing: both stay
            out.append(escaped, at, close + 1 - at);
            at = close + 1;
            continue;
        }
        out.append(escaped, at, open - at);
        out += "<code>" + escaped.substr(open + 1, close - open - 1) + "</code>";
        at = close + 1;
    }
    out.append(escaped, at, std::string::npos);
    return out;
}

class HtmlWriter {
  public:
    explicit HtmlWriter(const RenderOptions& options) : options_(options) {}

    // Written in pieces: the pictures and the body run to megabytes, and a page assembled in
    // one string copied each of them several times.
    void page(const Document& d, const std::vector<std::string>& pictures, const analysis::TraceView* view,
              const Sink& sink) {
        // The view's script is the page's only one, allowed by its hash; nothing may be fetched.
        const std::string scripts = view ? "; script-src " + view_script_source() : "";
        sink(
            fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src "
                        "'unsafe-inline'{2}\">\n"
                        "<title>{0}</title>\n<style>{1}</style>\n</head>\n<body>\n<h1>{0}</h1>\n",
                        xml_text(d.title), kStyle, scripts));
        for (const auto& svg : pictures) {
            const auto start = svg.find("<svg");
            const auto picture = std::string_view(svg).substr(start == std::string::npos ? 0 : start);
            constexpr std::string_view open = "<div>", close = "</div>\n";
            sink(open);
            sink(picture);
            sink(close);
            pictures_bytes_ += open.size() + picture.size() + close.size();
        }
        body(d.root, 2);
        sink(body_);
        if (view) sink(view_elements(*view));
        sink("</body>\n</html>\n");
    }

  private:
    const RenderOptions& options_;
    std::string body_;
    std::size_t pictures_bytes_ = 0;  // written before the body: they count against its budget
    std::size_t page_bytes() const { return pictures_bytes_ + body_.size(); }

    // True, with a line saying so, once the page has no room for rows `at` to `size` - 1.
    bool page_full(std::size_t at, std::size_t size) {
        if (page_bytes() < kMaxPageBytes) return false;
        body_ += fmt::format(
            "<p>Page budget (32 MiB): {} more rows are not shown; the JSON output holds them all.</p>\n", size - at);
        return true;
    }

    static std::string value(const Value& v) {
        if (v.kind == Value::Kind::verdict)
            return fmt::format("<span class=\"verdict {0}\">{1}</span>", xml_text(v.text), xml_text(for_people(v)));
        if (v.kind == Value::Kind::frame || v.kind == Value::Kind::word)
            return "<code>" + xml_text(for_people(v)) + "</code>";
        if (v.kind == Value::Kind::text) return code_spans(xml_text(for_people(v)));
        return xml_text(for_people(v));
    }

    static std::string fact_value(const Node& n) {
        if (n.kind == Node::Kind::value) return value(n.value) + (n.note.empty() ? "" : " (" + xml_text(n.note) + ")");
        std::string out;
        for (std::size_t i = 0; i < n.size(); ++i) {
            const Node item = n.item(i);
            if (!for_people(item)) continue;
            if (!out.empty()) out += ", ";
            out += n.layout == Layout::line && !item.label.empty() ? xml_text(label_of(item)) + " " + value(item.value)
                                                                   : value(item.value);
        }
        return out.empty() ? xml_text(n.note) : out;
    }

    static std::string headline(const Node& n) {
        std::string out;
        for (const auto& item : n.items)
            if (item.headline && for_people(item)) out += (out.empty() ? "" : " &mdash; ") + fact_value(item);
        return out;
    }

    void heading(const Node& n, int level) {
        if (n.label.empty()) return;
        const auto head = n.kind == Node::Kind::object ? headline(n) : std::string();
        const int h = std::min(level, 6);
        body_ += fmt::format("<h{0}>{1}{2}</h{0}>\n", h, xml_text(n.label), head.empty() ? "" : ": " + head);
    }

    void body(const Node& object, int level) {
        bool open = false;
        for (const auto& item : object.items) {
            if (!for_people(item) || (item.headline && !object.label.empty())) continue;
            if (item.kind == Node::Kind::value || item.layout == Layout::line || item.layout == Layout::inline_list) {
                if (!open) body_ += "<table class=\"facts\">\n";
                open = true;
                body_ += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", xml_text(label_of(item)), fact_value(item));
                continue;
            }
            if (open) body_ += "</table>\n";
            open = false;
            node(item, level);
        }
        if (open) body_ += "</table>\n";
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
                body_ += fmt::format("<p><b>{}</b>: {}</p>\n", xml_text(label_of(n)), fact_value(n));
                return;
            case Layout::hidden:
                return;
        }
    }

    void bullets(const Node& list) {
        if (list.size() == 0) return;
        if (!list.label.empty()) body_ += fmt::format("<p><b>{}</b></p>\n", xml_text(list.label));
        body_ += "<ul>\n";
        for (std::size_t i = 0; i < list.size(); ++i)
            if (const Node item = list.item(i); for_people(item)) body_ += "<li>" + fact_value(item) + "</li>\n";
        body_ += "</ul>\n";
    }

    void stack(const Node& list) {
        body_ += fmt::format("<p>{}:</p><pre>", xml_text(label_of(list)));
        for (const auto& line : stack_lines(list, options_.cpp_frames, 0).lines)
            body_ += xml_text(for_people(list.item(line.item).value)) + "\n";
        body_ += "</pre>\n";
    }

    void table(const Node& list, int level) {
        heading(list, level);
        // Rows are written as they are made: a long list is never held as nodes.
        std::vector<std::string> keys;
        bool any = false;
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (any && page_bytes() >= kMaxPageBytes) {
                body_ += "</table>\n";
                page_full(i, list.size());
                return;
            }
            const auto row = list.item(i);
            if (!for_people(row)) continue;
            if (!std::exchange(any, true)) {
                body_ += "<table>\n<tr>";
                for (const auto& cell : row.items)
                    if (for_people(cell) && cell.kind == Node::Kind::value) {
                        keys.push_back(cell.key);
                        body_ += "<th>" + xml_text(label_of(cell)) + "</th>";
                    }
                body_ += "</tr>\n";
            }
            body_ += "<tr>";
            for (const auto& key : keys)
                for (const auto& c : row.items)
                    if (c.key == key && c.kind == Node::Kind::value)
                        body_ +=
                            fmt::format("<td{}>{}</td>", is_numeric(c.value) ? " class=\"n\"" : "", value(c.value));
            body_ += "</tr>\n";
        }
        if (any)
            body_ += "</table>\n";
        else if (!list.note.empty())
            body_ += "<p>" + xml_text(list.note) + "</p>\n";
    }

    void records(const Node& list, int level) {
        heading(list, level);
        if (list.size() == 0 && !list.note.empty()) body_ += "<p>" + xml_text(list.note) + "</p>\n";
        for (std::size_t i = 0; i < list.size(); ++i) {
            if (page_full(i, list.size())) break;
            const Node item = list.item(i);
            if (!for_people(item)) continue;
            body_ += fmt::format("<details><summary>{}</summary>\n", headline(item));
            Node details = Node::object("", Layout::facts);
            for (const auto& field : item.items)
                if (!field.headline) details.items.push_back(field);
            body(details, level + 1);
            body_ += "</details>\n";
        }
    }
};

}  // namespace

void write_html(const Document& document, const std::vector<std::string>& pictures, const RenderOptions& options,
                const Sink& sink, const analysis::TraceView* view) {
    HtmlWriter(options).page(document, pictures, view, sink);
}

}  // namespace memsnap::report::detail
