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

}  // namespace memsnap::stats
