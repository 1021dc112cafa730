#include "format.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace memsnap::report {

std::string Style::paint(std::string_view code, std::string_view text) const {
    return color ? fmt::format("\x1b[{}m{}\x1b[0m", code, text) : std::string(text);
}

std::string Style::bold(std::string_view text) const { return paint("1", text); }

std::string Style::verdict(std::string_view name) const {
    std::string upper(name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (name == "leak") return paint("1;31", upper);
    if (name == "stable" || name == "shrink" || name == "freed") return paint("1;32", upper);
    return paint("1;33", upper);
}

std::string frame_label(const analysis::FrameText& f) {
    if (f.line == 0) return util::printable(fmt::format("{} {}", f.filename, f.name));
    return util::printable(fmt::format("{}:{} {}", f.filename, f.line, f.name));
}

std::string site_label(const analysis::SiteKey& site) { return util::printable(site.label()); }

}  // namespace memsnap::report
