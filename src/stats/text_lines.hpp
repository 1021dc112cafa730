#pragma once
// Line handling shared by the memory_summary and memory_stats readers. Both walk the text
// once: no list of lines is built, and line numbers are counted as the walk goes.

#include <memsnap/limits.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

// One logical line of text and the 1-based physical line it came from.
struct TextLine {
    std::string_view text;
    std::size_t line = 0;
};

// Calls `visit(TextLine)` for each line of `text` (LF or CRLF). A physical line that holds a
// Python string repr of a table ('|===…|\n|  PyTorch…', notebook output) is split further at
// each literal "\n" escape; all its pieces keep the physical line number.
template <class Visit>
void for_each_text_line(std::string_view text, Visit&& visit);

// 1-based line numbers of byte offsets, for offsets that never go backwards (then each
// call costs the distance walked since the last one, so a whole file costs its size).
class LineCounter {
  public:
    explicit LineCounter(std::string_view text) : text_(text) {}
    std::size_t line_of(std::size_t offset);

  private:
    std::string_view text_;
    std::size_t offset_ = 0, line_ = 1;
};

// "FILE:LINE: message" ("line LINE: message" when `file` is empty).
std::string located(const std::string& file, std::size_t line, std::string_view message);

// The warnings of one file. The first hundred say what is wrong; a file of broken lines
// would otherwise make one per line, and more memory than text.
class FileWarnings {
  public:
    explicit FileWarnings(const std::string& file) : file_(file) {}
    // Adds "FILE:LINE: message" to `to`, or only counts it once the first hundred are kept.
    void add(std::vector<std::string>& to, std::size_t line, std::string_view message);
    // "N more warning(s) in FILE were not kept", when any were not.
    std::optional<std::string> summary() const;

  private:
    static constexpr std::size_t kKept = limits::text_warnings;
    const std::string& file_;
    std::size_t kept_ = 0, dropped_ = 0;
};

// Splits one physical line that holds an escaped table into its logical lines.
template <class Visit>
void for_each_escaped_piece(std::string_view line, std::size_t number, Visit&& visit) {
    // What follows the last escape is the string's closing quote and the separator of its
    // container: ' or ", or "\n",' in a notebook's JSON. It is not a line.
    const auto is_punctuation = [](std::string_view piece) {
        return piece.find_first_not_of("\"',)]} \t") == std::string_view::npos;
    };
    std::size_t piece = 0;
    while (true) {
        const std::size_t esc = line.find("\\n", piece);
        if (esc == std::string_view::npos) {
            if (!is_punctuation(line.substr(piece))) visit(TextLine{line.substr(piece), number});
            return;
        }
        visit(TextLine{line.substr(piece, esc - piece), number});
        piece = esc + 2;
    }
}

template <class Visit>
void for_each_text_line(std::string_view text, Visit&& visit) {
    std::size_t number = 1;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t end = text.find('\n', start);
        const bool last = end == std::string_view::npos;
        if (last) end = text.size();
        std::string_view line = text.substr(start, end - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // Only lines that look like an escaped table are split: a stray "\n" in a log
        // message must not invent lines.
        if (line.find("|\\n") != std::string_view::npos)
            for_each_escaped_piece(line, number, visit);
        else
            visit(TextLine{line, number});
        if (last) break;
        start = end + 1;
        ++number;
    }
}

}  // namespace memsnap::stats
