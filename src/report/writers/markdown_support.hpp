#pragma once
// Internal: Markdown escapes shared by the Markdown writers (GitHub-flavoured).

#include <string>
#include <string_view>
#include <vector>

namespace memsnap::report::md {

// One printable line: table cells and summaries cannot hold line breaks or control bytes.
std::string one_line(std::string_view text);
// A table cell: `|` would end the cell (GitHub honours `\|` even inside code spans).
std::string cell(std::string_view text);
// Inline code that survives backticks in the text.
std::string code(std::string_view text);
// A fenced code block that survives backticks in the text.
std::string fence(const std::string& body);
// Text inside HTML elements (<summary>): "<no stack>" must not become a tag.
std::string html(std::string_view text);
// "- item" lines.
void bullets(std::string& out, const std::vector<std::string>& items);

}  // namespace memsnap::report::md
