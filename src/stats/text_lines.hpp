#pragma once
// Line handling shared by the memory_summary and memory_stats readers.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

// One logical line of text and the 1-based physical line it came from.
struct TextLine {
    std::string_view text;
    std::size_t line = 0;
};

// Splits `text` into lines (LF or CRLF). A physical line that holds a Python string repr of a
// table ('|===…|\n|  PyTorch…', notebook output) is split further at each literal "\n"
// escape; all its pieces keep the physical line number.
std::vector<TextLine> split_text_lines(std::string_view text);

// 1-based line number of byte `offset` in `text`.
std::size_t line_of_offset(std::string_view text, std::size_t offset);

// "FILE:LINE: message" ("line LINE: message" when `file` is empty).
std::string located(const std::string& file, std::size_t line, std::string_view message);

}  // namespace memsnap::stats
