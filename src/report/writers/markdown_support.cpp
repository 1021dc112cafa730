#include "markdown_support.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report::md {

namespace {

std::size_t longest_backtick_run(std::string_view text) {
    std::size_t longest = 0, run = 0;
    for (const char c : text) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

}  // namespace

std::string one_line(std::string_view text) { return util::printable(text); }

std::string cell(std::string_view text) {
    std::string out;
    for (const char c : one_line(text)) {
        if (c == '|') out += '\\';
        out += c;
    }
    return out;
}

std::string code(std::string_view text) {
    const std::string ticks(longest_backtick_run(text) + 1, '`');
    const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
    return fmt::format("{}{}{}{}{}", ticks, pad ? " " : "", text, pad ? " " : "", ticks);
}

std::string fence(const std::string& body) {
    const std::string ticks(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
    return fmt::format("{}\n{}{}\n", ticks, body, ticks);
}

std::string html(std::string_view text) {
    std::string out;
    for (const char c : one_line(text)) {
        switch (c) {
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

void bullets(std::string& out, const std::vector<std::string>& items) {
    for (const auto& item : items) out += fmt::format("- {}\n", one_line(item));
}

}  // namespace memsnap::report::md
