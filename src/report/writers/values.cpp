#include "values.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace memsnap::report::detail {

namespace {

// Whole numbers as integers ("growth exact to the byte"), fractions as doubles, null for
// what is not finite.
Json number(double value) {
    if (std::isfinite(value) && std::floor(value) == value && std::abs(value) < 9.0e15)
        return static_cast<std::int64_t>(value);
    if (!std::isfinite(value)) return nullptr;
    return value;
}

// Fixed notation without "-0.000".
std::string fixed(double value, int decimals) {
    if (!std::isfinite(value)) return "—";
    std::string out = fmt::format("{:.{}f}", value, decimals);
    if (out.find_first_not_of("-0.") == std::string::npos && out.front() == '-') out.erase(0, 1);
    return out;
}

}  // namespace

std::string for_people(const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::none:
            return "—";
        case K::flag:
            return v.integer ? "yes" : "no";
        case K::count:
            if (v.unit.empty()) return fmt::format("{}", v.integer);
            return fmt::format("{} {}{}", v.integer, v.unit, v.integer == 1 ? "" : "s");
        case K::signed_count:
            return util::signed_count(v.integer);
        case K::number:
            return fixed(v.real, v.decimals);
        case K::bytes:
            return util::human_bytes(v.integer);
        case K::signed_bytes:
            return util::signed_bytes(v.integer);
        case K::rate:
            return util::rate(v.real, v.per_step);
        case K::share:
            return util::percent(v.real) + "%";
        case K::seconds:
            return fmt::format("{:.3f} s", v.real);
        case K::text:
        case K::word:
        case K::verdict:
        case K::json:
            return util::printable(v.text);
        case K::frame: {
            std::string out = v.text.empty()   ? v.name
                              : v.integer == 0 ? fmt::format("{} {}", v.text, v.name)
                                               : fmt::format("{}:{} {}", v.text, v.integer, v.name);
            if (v.compiled) out += " (torch.compile graph)";
            return util::printable(out);
        }
        case K::numbers: {
            std::string out;
            for (const auto n : *v.list) out += (out.empty() ? "" : ", ") + std::to_string(n);
            return out;
        }
        case K::range:
        case K::count_range: {
            const bool bytes = v.kind == K::range;
            if (v.change) return util::format_delta({v.integer, v.high}, bytes);
            return util::format_range_compact({v.integer, v.high}, bytes);
        }
    }
    return "";
}

Json to_json(const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::none:
            return nullptr;
        case K::flag:
            return v.integer != 0;
        case K::count:
        case K::signed_count:
        case K::bytes:
        case K::signed_bytes:
            return v.integer;
        case K::number:
        case K::rate:
        case K::share:
        case K::seconds:
            return number(v.real);
        case K::text:
        case K::word:
        case K::verdict:
            return v.text;
        case K::json: {
            auto parsed = Json::parse(v.text, nullptr, false);
            return parsed.is_discarded() ? Json(v.text) : parsed;
        }
        case K::frame:
            return {{"filename", v.text}, {"line", v.integer}, {"name", v.name}};
        case K::numbers:
            return *v.list;
        case K::range:
        case K::count_range:
            return {{"low", v.integer}, {"high", v.high}};
    }
    return nullptr;
}

bool is_numeric(const Value& v) {
    using K = Value::Kind;
    switch (v.kind) {
        case K::count:
        case K::signed_count:
        case K::number:
        case K::bytes:
        case K::signed_bytes:
        case K::rate:
        case K::share:
        case K::seconds:
        case K::range:
        case K::count_range:
            return true;
        default:
            return false;
    }
}

namespace {

// A C++ frame that names what ran: an operator's entry, or the autograd node (a backward function,
// AccumulateGrad) that called it.
bool operator_frame(std::string_view name) {
    const bool op = name.find("at::_ops::") != std::string_view::npos && name.find("::call(") != std::string_view::npos;
    const bool node =
        name.find("torch::autograd::") != std::string_view::npos && name.find("::apply(") != std::string_view::npos;
    return op || node;
}

constexpr std::size_t kOperatorFrames = 3;
constexpr std::size_t kOutermostPythonFrames = 3;

}  // namespace

StackLines stack_lines(const Node& list, bool cpp_frames, std::size_t python_limit) {
    StackLines out;
    const auto python_frame = [](const Node& item) {
        return item.kind == Node::Kind::value && item.value.kind == Value::Kind::frame && item.value.python;
    };
    std::vector<bool> user;  // of each Python frame, innermost first
    for (std::size_t i = 0; i < list.size(); ++i)
        if (const Node item = list.item(i); python_frame(item)) user.push_back(item.value.user);
    // A long run keeps its innermost frames and, past them, the user's calls that led there
    // (the site's frame among them), else the outermost.
    std::vector<bool> kept(user.size(), true);
    if (!cpp_frames && python_limit > kOutermostPythonFrames && user.size() > python_limit) {
        const std::size_t head = python_limit - kOutermostPythonFrames;
        std::fill(kept.begin() + static_cast<std::ptrdiff_t>(head), kept.end(), false);
        std::size_t more = 0;
        for (std::size_t k = head; k < user.size() && more < kOutermostPythonFrames; ++k)
            if (user[k]) kept[k] = true, ++more;
        if (more == 0) std::fill(kept.end() - static_cast<std::ptrdiff_t>(kOutermostPythonFrames), kept.end(), true);
    }
    std::size_t python_seen = 0, gap = 0, operators = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const Node item = list.item(i);
        if (item.kind != Node::Kind::value) continue;
        const Value& v = item.value;
        if (v.kind == Value::Kind::frame && !v.python && !cpp_frames) {
            if (user.empty() && operators < kOperatorFrames && operator_frame(v.name)) {
                ++operators;
                out.lines.push_back({i, 0});
            } else {
                ++out.cpp_hidden;
            }
            continue;
        }
        if (python_frame(item) && !kept[python_seen++]) {
            ++gap;
            continue;
        }
        out.lines.push_back({i, std::exchange(gap, 0)});
    }
    out.gap_at_end = gap;
    return out;
}

std::string python_frames_left_out(std::size_t frames) {
    return fmt::format("... {} more Python frame{}", frames, frames == 1 ? "" : "s");
}

std::string cpp_frames_left_out(std::size_t frames) {
    return fmt::format("({} C++ frame{} not shown: --cpp-frames shows them)", frames, frames == 1 ? "" : "s");
}

std::string label_of(const Node& node) {
    // Labels may come from the input (trace actions, allocator setting keys): never raw.
    if (!node.label.empty()) return util::printable(node.label);
    std::string out = node.key;
    for (char& c : out)
        if (c == '_') c = ' ';
    return util::printable(out);
}

}  // namespace memsnap::report::detail
