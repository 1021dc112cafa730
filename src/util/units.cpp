#include <memsnap/error.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace memsnap::util {

std::int64_t parse_size(std::string_view text) {
    const std::string original(text);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    std::size_t split = 0;
    while (split < text.size() && (std::isdigit(static_cast<unsigned char>(text[split])) || text[split] == '.'))
        ++split;
    double number = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + split, number);
    if (split == 0 || ec != std::errc() || ptr != text.data() + split)
        throw usage_error(fmt::format("'{}' is not a size (examples: 4096, 512KiB, 10MiB, 1.5GiB)", original));
    std::string unit(text.substr(split));
    while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
    for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (unit.ends_with("/step")) unit.resize(unit.size() - 5);
    double scale = 1;
    if (unit.empty() || unit == "b")
        scale = 1;
    else if (unit == "k" || unit == "kb" || unit == "kib")
        scale = 1024.0;
    else if (unit == "m" || unit == "mb" || unit == "mib")
        scale = 1024.0 * 1024;
    else if (unit == "g" || unit == "gb" || unit == "gib")
        scale = 1024.0 * 1024 * 1024;
    else if (unit == "t" || unit == "tb" || unit == "tib")
        scale = 1024.0 * 1024 * 1024 * 1024;
    else
        throw usage_error(fmt::format("'{}': unknown size unit '{}' (use B, KiB, MiB, GiB, TiB)", original, unit));
    const double bytes = number * scale;
    if (bytes > 9.0e18) throw usage_error(fmt::format("'{}' is too large", original));
    return static_cast<std::int64_t>(std::llround(bytes));
}

}  // namespace memsnap::util
