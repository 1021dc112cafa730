#include "text_lines.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::stats {

std::vector<TextLine> split_text_lines(std::string_view text) {
    std::vector<TextLine> out;
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
        const bool escaped_table = line.find("|\\n") != std::string_view::npos;
        if (escaped_table) {
            // What follows the last escape is the string's closing quote and the separator
            // of its container: ' or ", or "\n",' in a notebook's JSON. It is not a line.
            const auto is_punctuation = [](std::string_view piece) {
                return piece.find_first_not_of("\"',)]} \t") == std::string_view::npos;
            };
            std::size_t piece = 0;
            while (true) {
                const std::size_t esc = line.find("\\n", piece);
                if (esc == std::string_view::npos) {
                    if (!is_punctuation(line.substr(piece))) out.push_back({line.substr(piece), number});
                    break;
                }
                out.push_back({line.substr(piece, esc - piece), number});
                piece = esc + 2;
            }
        } else {
            out.push_back({line, number});
        }
        if (last) break;
        start = end + 1;
        ++number;
    }
    return out;
}

std::size_t line_of_offset(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    return 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

std::string located(const std::string& file, std::size_t line, std::string_view message) {
    if (file.empty()) return fmt::format("line {}: {}", line, message);
    return fmt::format("{}:{}: {}", file, line, message);
}

}  // namespace memsnap::stats
