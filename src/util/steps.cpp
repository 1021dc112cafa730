#include <memsnap/error.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <regex>

namespace memsnap::util {

namespace {

std::string stem_of(std::string_view path) {
    return std::filesystem::path(std::string(path)).stem().string();
}

std::optional<std::int64_t> to_int(const std::string& digits) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc()) return std::nullopt;
    return value;
}

// The last number that a step word introduces: step100, step_500, iter-3, epoch2, it500.
std::optional<std::int64_t> keyword_step(const std::string& stem) {
    static const std::regex pattern(R"((?:global_step|step|iteration|iter|it|epoch|batch)[_\-]?([0-9]+))",
                                    std::regex::icase);
    std::optional<std::int64_t> last;
    for (auto it = std::sregex_iterator(stem.begin(), stem.end(), pattern); it != std::sregex_iterator(); ++it)
        last = to_int((*it)[1].str());
    return last;
}

}  // namespace

std::optional<std::int64_t> step_from_file_name(std::string_view path) {
    const std::string stem = stem_of(path);
    if (const auto step = keyword_step(stem)) return step;
    static const std::regex number("[0-9]+");
    std::optional<std::int64_t> last;
    for (auto it = std::sregex_iterator(stem.begin(), stem.end(), number); it != std::sregex_iterator(); ++it)
        last = to_int(it->str());
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
    const std::string a_stem = stem_of(before), b_stem = stem_of(after);
    // A step word in both names ("run_step100", "iter500") decides.
    const auto a_key = keyword_step(a_stem), b_key = keyword_step(b_stem);
    if (a_key && b_key && *a_key != *b_key) return {std::make_pair(*a_key, *b_key), "file names"};
    // Otherwise the last number counts only when the names differ in nothing but numbers:
    // "snap_100"/"snap_500" are steps, "forward_fp32"/"forward_bf16" are not.
    static const std::regex digits("[0-9]+");
    if (std::regex_replace(a_stem, digits, "#") != std::regex_replace(b_stem, digits, "#"))
        return {std::nullopt, "unknown"};
    const auto a = step_from_file_name(before), b = step_from_file_name(after);
    if (a && b && *a != *b) return {std::make_pair(*a, *b), "file names"};
    return {std::nullopt, "unknown"};
}

}  // namespace memsnap::util
