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

std::vector<std::string> stack_lines(const analysis::RepresentativeStack& stack,
                                     const std::vector<analysis::FrameText>& table, bool cpp_frames,
                                     std::size_t python_limit) {
    std::vector<std::string> out;
    const std::string omitted =
        stack.frames_omitted ? fmt::format("... {} outer frames not kept", stack.frames_omitted) : "";
    if (cpp_frames) {
        for (const auto i : stack.frames) out.push_back(frame_label(table[i]));
        if (!omitted.empty()) out.push_back(omitted);
        return out;
    }
    std::size_t python = 0, cpp = 0;
    for (const auto i : stack.frames) {
        const auto& f = table[i];
        if (!f.python) {
            ++cpp;
            continue;
        }
        if (python_limit == 0 || python < python_limit) out.push_back(frame_label(f));
        ++python;
    }
    if (python_limit != 0 && python > python_limit)
        out.push_back(
            fmt::format("... {} more Python frame{}", python - python_limit, python - python_limit == 1 ? "" : "s"));
    if (cpp > 0)
        out.push_back(fmt::format("({} C++ frame{} not shown: --cpp-frames shows them)", cpp, cpp == 1 ? "" : "s"));
    if (!omitted.empty()) out.push_back(omitted);
    return out;
}

void usage_lines(std::string& out, const analysis::MomentUsage& usage, const char* indent) {
    std::string categories;
    for (const auto c : analysis::all_categories()) {
        const auto bytes = usage.category_bytes[static_cast<std::size_t>(c)];
        if (bytes > 0)
            categories += fmt::format("{}{} {}", categories.empty() ? "" : ", ", analysis::to_string(c),
                                      util::human_bytes(bytes));
    }
    out += fmt::format("{}categories: {}\n", indent, categories.empty() ? "none" : categories);
    for (const auto& s : usage.sites)
        out += fmt::format("{}#{:<3} {:>12}  {:>18}  {}  [{}]\n", indent, s.rank, util::human_bytes(s.bytes),
                           counted(s.allocations, "allocation"), site_label(s.site), analysis::to_string(s.category));
}

void oom_text(std::string& out, const analysis::OomExplanation& o, const Style& style, const std::string& when) {
    out += fmt::format("\n{} {}: requested {}, {} free on the device → {}\n", style.bold("Out of memory"), when,
                       util::human_bytes(o.requested_bytes), util::human_bytes(o.device_free_bytes),
                       style.verdict(o.classification));
    if (o.frame) out += fmt::format("  at {}\n", frame_label(*o.frame));
    for (const auto& e : o.evidence) out += fmt::format("  - {}\n", util::printable(e));
    for (const auto& a : o.advice) out += fmt::format("  fix: {}\n", a);
    out += "  live at that moment:\n";
    usage_lines(out, o.usage, "    ");
}

std::string sparkline(const std::vector<std::int64_t>& all) {
    static constexpr const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    constexpr std::size_t kWidth = 60;
    if (all.empty()) return "";
    std::vector<std::int64_t> values;
    if (all.size() <= kWidth) {
        values = all;
    } else {
        for (std::size_t b = 0; b < kWidth; ++b) {
            const auto begin = all.begin() + static_cast<std::ptrdiff_t>(b * all.size() / kWidth);
            const auto end = all.begin() + static_cast<std::ptrdiff_t>((b + 1) * all.size() / kWidth);
            values.push_back(*std::max_element(begin, end));
        }
    }
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    std::string out;
    for (const auto v : values) {
        const double share = *hi == *lo ? 0.0 : static_cast<double>(v - *lo) / static_cast<double>(*hi - *lo);
        out += bars[std::min<std::size_t>(7, static_cast<std::size_t>(share * 8))];
    }
    return out;
}

std::string counted(std::int64_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string run_lengths(const std::vector<std::int64_t>& counts) {
    std::string out;
    for (std::size_t i = 0; i < counts.size();) {
        std::size_t j = i;
        while (j < counts.size() && counts[j] == counts[i]) ++j;
        out += fmt::format("{}{}", out.empty() ? "" : " ", counts[i]);
        if (j - i > 1) out += fmt::format("×{}", j - i);
        i = j;
    }
    return out;
}

std::string steps_text(const util::Steps& steps) {
    if (!steps.known()) return "unknown";
    return fmt::format("{} → {} ({} steps, from {})", steps.span->first, steps.span->second, steps.distance(),
                       steps.source);
}

std::string same_process_text(const analysis::SameProcess& same) {
    const char* answer = !same.value ? "unknown" : *same.value ? "yes" : "no";
    if (same.evidence.empty()) return answer;
    return fmt::format("{}: {}", answer, util::printable(same.evidence.front()));
}

std::string device_list(const std::vector<int>& devices) {
    return devices.empty() ? std::string("none") : fmt::format("{}", fmt::join(devices, ", "));
}

}  // namespace memsnap::report
