#include <memsnap/error.hpp>

#include <fmt/format.h>

namespace memsnap {

std::string Error::describe() const {
    std::string out;
    if (!file_.empty()) out += file_ + ": ";
    if (byte_offset_) out += fmt::format("byte {}: ", *byte_offset_);
    out += what();
    // One line, always: input-derived text must not break the line.
    for (char& c : out)
        if (c == '\n' || c == '\r') c = ' ';
    return out;
}

}  // namespace memsnap
