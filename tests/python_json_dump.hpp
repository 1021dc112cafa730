#pragma once
// What Python's json.dump writes for a decoded pickle, byte for byte as CPython's encoder
// does by default: ", " and ": " between items, ASCII only (\uXXXX, surrogate pairs above
// U+FFFF), tuples as lists, int, float, bool and None keys as their JSON text, NaN and
// Infinity as such. A real capture so becomes the JSON snapshot its user would dump, with
// no Python in the test (for each capture in ../shared/real it gave the very bytes
// tests/bench/pickle_to_json.py writes). Bytes and sets throw, as they make json.dump raise TypeError.

#include <memsnap/pickle/document.hpp>

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <string_view>

namespace memsnap::test {

namespace python_json_detail {

// One code point from UTF-8 as Python's surrogatepass decodes it (pickle writes lone
// surrogates that way); advances `i`.
inline char32_t next_code_point(std::string_view s, std::size_t& i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char lead = byte(i);
    const int extra = lead < 0x80 ? 0 : lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
    if (extra > 0 && i + static_cast<std::size_t>(extra) >= s.size())
        throw std::runtime_error("a string of the pickle is not UTF-8");
    char32_t c = extra == 0 ? lead : lead & (0x3F >> extra);
    for (int k = 1; k <= extra; ++k) c = (c << 6) | (byte(i + static_cast<std::size_t>(k)) & 0x3F);
    i += static_cast<std::size_t>(extra) + 1;
    return c;
}

inline void append_string(std::string& out, std::string_view s) {
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        const char32_t c = next_code_point(s, i);
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            case '\b':
                out += "\\b";
                break;
            case '\f':
                out += "\\f";
                break;
            default:
                if (c >= 0x20 && c < 0x7F) {
                    out += static_cast<char>(c);
                } else if (c > 0xFFFF) {
                    const char32_t v = c - 0x10000;
                    out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 | (v >> 10), 0xDC00 | (v & 0x3FF));
                } else {
                    out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(c));
                }
        }
    }
    out += '"';
}

// float.__repr__: the shortest text that reads back, with ".0" when it looks like an integer.
inline std::string float_text(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
    std::string text = fmt::format("{}", d);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return text;
}

}  // namespace python_json_detail

inline void python_json_dump(const pickle::Document& doc, const pickle::Value& value, std::string& out) {
    using namespace python_json_detail;
    using pickle::Kind;
    const pickle::Value v = doc.resolve(value);
    switch (v.kind) {
        case Kind::none:
            out += "null";
            return;
        case Kind::boolean:
            out += v.i ? "true" : "false";
            return;
        case Kind::integer:
            out += fmt::format("{}", v.i);
            return;
        case Kind::big_integer:
            out += fmt::format("{}", v.u);
            return;
        case Kind::floating:
            out += float_text(v.d);
            return;
        case Kind::string:
            append_string(out, doc.text(v));
            return;
        case Kind::list:
        case Kind::tuple: {
            out += '[';
            bool first = true;
            for (const auto& item : doc.items(v)) {
                if (!first) out += ", ";
                first = false;
                python_json_dump(doc, item, out);
            }
            out += ']';
            return;
        }
        case Kind::dict: {
            out += '{';
            const auto& kv = doc.items(v);
            for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
                if (i) out += ", ";
                const pickle::Value key = doc.resolve(kv[i]);
                if (key.kind == Kind::string)
                    python_json_dump(doc, key, out);
                else if (key.kind == Kind::integer || key.kind == Kind::boolean || key.kind == Kind::none ||
                         key.kind == Kind::floating) {
                    std::string text;
                    python_json_dump(doc, key, text);
                    append_string(out, text);
                } else {
                    throw std::runtime_error("keys must be str, int, float, bool or None");
                }
                out += ": ";
                python_json_dump(doc, kv[i + 1], out);
            }
            out += '}';
            return;
        }
        default:
            throw std::runtime_error("json.dump cannot write bytes, sets or opaque values");
    }
}

inline std::string python_json_dump(const pickle::Document& doc) {
    std::string out;
    python_json_dump(doc, doc.root, out);
    return out;
}

}  // namespace memsnap::test
