#include <memsnap/error.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <regex>

namespace memsnap::util {

std::optional<std::int64_t> step_from_file_name(std::string_view path) {
    const std::string stem = std::filesystem::path(std::string(path)).stem().string();
    static const std::regex number("[0-9]+");
    std::optional<std::int64_t> last;
    for (auto it = std::sregex_iterator(stem.begin(), stem.end(), number); it != std::sregex_iterator(); ++it) {
        std::int64_t value = 0;
        const std::string digits = it->str();
        const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (ec == std::errc()) last = value;
    }
    return last;
}

std::pair<std::int64_t, std::int64_t> parse_steps(std::string_view text) {
    static const std::regex pattern(R"(\s*(-?[0-9]+)\s*,\s*(-?[0-9]+)\s*)");
    std::cmatch m;
    const std::string s(text);
    if (!std::regex_match(s.c_str(), m, pattern))
        throw usage_error(fmt::format("--steps: '{}' is not of the form A,B (e.g. 100,500)", text));
    const auto a = std::stoll(m[1].str());
    const auto b = std::stoll(m[2].str());
    if (a == b) throw usage_error(fmt::format("--steps: the two steps must differ ('{}')", text));
    return {a, b};
}

ResolvedSteps resolve_steps(std::string_view option, std::string_view before, std::string_view after) {
    if (!option.empty()) return {parse_steps(option), "--steps"};
    const auto a = step_from_file_name(before);
    const auto b = step_from_file_name(after);
    if (a && b && *a != *b) return {std::make_pair(*a, *b), "file names"};
    return {std::nullopt, "unknown"};
}

}  // namespace memsnap::util
