#include "text_lines.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::stats {

std::size_t LineCounter::line_of(std::size_t offset) {
    offset = std::min(offset, text_.size());
    if (offset < offset_) {  // backwards: count again from the start (never in practice)
        offset_ = 0;
        line_ = 1;
    }
    line_ += static_cast<std::size_t>(std::count(text_.begin() + static_cast<std::ptrdiff_t>(offset_),
                                                 text_.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    offset_ = offset;
    return line_;
}

std::string located(const std::string& file, std::size_t line, std::string_view message) {
    if (file.empty()) return fmt::format("line {}: {}", line, message);
    return fmt::format("{}:{}: {}", file, line, message);
}

void FileWarnings::add(std::vector<std::string>& to, std::size_t line, std::string_view message) {
    if (kept_ == kKept) {
        ++dropped_;
        return;
    }
    ++kept_;
    to.push_back(located(file_, line, message));
}

std::optional<std::string> FileWarnings::summary() const {
    if (dropped_ == 0) return std::nullopt;
    return fmt::format("{} more warning(s) in {} were not kept", dropped_, file_.empty() ? "the input" : file_);
}

}  // namespace memsnap::stats
