#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstdlib>

namespace memsnap::util {

std::string human_bytes(std::int64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    const double magnitude = std::abs(static_cast<double>(bytes));
    if (magnitude < 1024) return fmt::format("{} B", bytes);
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (std::abs(value) >= 1024 && unit < 6) {
        value /= 1024;
        ++unit;
    }
    return fmt::format("{:.2f} {}", value, units[unit]);
}

std::string signed_bytes(std::int64_t bytes) {
    return bytes > 0 ? fmt::format("+{}", human_bytes(bytes)) : human_bytes(bytes);
}

std::string signed_count(std::int64_t count) {
    return count > 0 ? fmt::format("+{}", count) : fmt::format("{}", count);
}

std::string rate_value(double bytes_per_unit) {
    const auto rounded = std::isfinite(bytes_per_unit) && std::abs(bytes_per_unit) < 9.0e18
                             ? static_cast<std::int64_t>(std::llround(bytes_per_unit))
                             : std::int64_t{0};
    return signed_bytes(rounded);
}

std::string rate(double bytes_per_unit, bool per_step) {
    return fmt::format("{}/{}", rate_value(bytes_per_unit), per_step ? "step" : "capture");
}

std::string_view per_unit(bool per_step) { return per_step ? "per step" : "per capture"; }

std::string device_name(std::optional<int> device) {
    return device ? fmt::format("device {}", *device) : std::string("device unknown");
}

std::string percent(double share) {
    if (!std::isfinite(share)) return "—";
    const double value = share * 100;
    return fmt::format("{:.1f}", value == 0 ? 0.0 : value);
}

std::string count_rate(double count) {
    if (!std::isfinite(count)) return "—";
    const double size = std::fabs(count);
    if (size >= 100) return fmt::format("{:.0f}", count);
    if (size != 0 && size < 0.001) return count < 0 ? "-<0.001" : "<0.001";
    return fmt::format("{:.3g}", count);
}

namespace {

// When the range is exactly one unit wide and aligned, it came from one truncated table
// cell: show it the way the table did.
std::string as_table_cell(ByteRange r, bool bytes) {
    if (bytes) {
        static constexpr std::array<const char*, 5> units = {"KiB", "MiB", "GiB", "TiB", "PiB"};
        for (std::size_t i = units.size(); i-- > 0;) {
            const std::int64_t unit = std::int64_t{1} << (10 * (i + 1));
            if (r.low % unit == 0 && r.high - r.low == unit - 1) return fmt::format("{} {}", r.low / unit, units[i]);
        }
    } else {
        static constexpr std::array<std::pair<std::int64_t, const char*>, 2> units = {
            std::pair<std::int64_t, const char*>{1'000'000, "M"}, {1'000, "K"}};
        for (const auto& [unit, name] : units)
            if (r.low % unit == 0 && r.high - r.low == unit - 1) return fmt::format("{} {}", r.low / unit, name);
    }
    return {};
}

}  // namespace

std::string format_range(ByteRange r, bool bytes) {
    const char* suffix = bytes ? " B" : "";
    if (r.is_exact()) {
        if (!bytes) return fmt::format("{}", r.low);
        if (std::abs(static_cast<double>(r.low)) < 1024) return human_bytes(r.low);
        return fmt::format("{} ({} B)", human_bytes(r.low), r.low);
    }
    if (auto cell = as_table_cell(r, bytes); !cell.empty())
        return fmt::format("{} ({}–{}{})", cell, r.low, r.high, suffix);
    if (bytes) return fmt::format("{}–{} ({}–{} B)", human_bytes(r.low), human_bytes(r.high), r.low, r.high);
    return fmt::format("{}–{}", r.low, r.high);
}

std::string format_range_compact(ByteRange r, bool bytes) {
    if (r.is_exact()) return bytes ? human_bytes(r.low) : fmt::format("{}", r.low);
    if (auto cell = as_table_cell(r, bytes); !cell.empty()) return cell;
    if (bytes) {
        // Both ends print alike (a 1 KiB-wide range of GiB): "about"; a dash beside a minus sign
        // reads as a double minus, so a range below zero takes an ellipsis.
        const auto low = human_bytes(r.low), high = human_bytes(r.high);
        if (low == high) return "≈" + low;
        return low + (r.low < 0 ? " … " : "–") + high;
    }
    return fmt::format("{}{}{}", r.low, r.low < 0 ? " … " : "–", r.high);
}

std::string format_delta(ByteRange d, bool bytes) {
    auto one = [bytes](std::int64_t v) { return bytes ? signed_bytes(v) : signed_count(v); };
    if (d.is_exact()) return one(d.low);
    // Both ends round to the same text (e.g. a 1 MiB-wide range on a GiB change): say "about".
    if (const auto low = one(d.low), high = one(d.high); low == high) return "≈" + low;
    return fmt::format("{} … {}", one(d.low), one(d.high));
}

namespace {

// The code point of one well-formed UTF-8 sequence.
char32_t code_point(std::string_view sequence) {
    const auto lead = static_cast<unsigned char>(sequence[0]);
    char32_t point = sequence.size() == 2 ? lead & 0x1fu : sequence.size() == 3 ? lead & 0x0fu : lead & 0x07u;
    for (std::size_t k = 1; k < sequence.size(); ++k)
        point = (point << 6) | (static_cast<unsigned char>(sequence[k]) & 0x3fu);
    return point;
}

// Code points a reader must see rather than have act: C1 controls (terminals take U+009B as
// CSI), the bidi controls that can show one file name as another, and the two that XML
// forbids (a browser stops drawing an SVG at them).
bool hidden_code_point(char32_t point) {
    return (point >= 0x80 && point <= 0x9f) || point == 0x061c || point == 0x200e || point == 0x200f ||
           (point >= 0x202a && point <= 0x202e) || (point >= 0x2066 && point <= 0x2069) || point == 0xfffe ||
           point == 0xffff;
}

}  // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x20 || c == 0x7f) {
            switch (c) {
                case '\n':
                    out += "\\n";
                    break;
                case '\r':
                    out += "\\r";
                    break;
                case '\t':
                    out += "\\t";
                    break;
                default:
                    out += fmt::format("\\x{:02x}", c);
            }
            ++i;
            continue;
        }
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        // A well-formed UTF-8 sequence passes; anything else is escaped byte by byte.
        const std::size_t length = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        bool valid = length != 0 && i + length <= text.size();
        for (std::size_t k = 1; valid && k < length; ++k)
            valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        if (valid && length == 3) {  // no overlong forms or surrogates
            const auto c1 = static_cast<unsigned char>(text[i + 1]);
            valid = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 >= 0xa0);
        }
        if (valid && length == 4) {
            const auto c1 = static_cast<unsigned char>(text[i + 1]);
            valid = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 >= 0x90);
        }
        if (!valid) {
            out += fmt::format("\\x{:02x}", c);
            ++i;
            continue;
        }
        if (const auto point = code_point(text.substr(i, length)); hidden_code_point(point))
            out += fmt::format("<U+{:04X}>", static_cast<std::uint32_t>(point));
        else
            out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

}  // namespace memsnap::util
