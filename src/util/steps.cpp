#include <memsnap/error.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/pattern.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>

#include <charconv>
#include <filesystem>

namespace memsnap::util {

namespace {

std::string stem_of(std::string_view path) { return std::filesystem::path(std::string(path)).stem().string(); }

std::optional<std::int64_t> to_int(std::string_view digits) {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
    return value;
}

// Growth per step divides by the distance between steps: it must fit, or the sign turns.
void check_distance(std::int64_t first, std::int64_t last) {
    if (!checked_sub(last, first))
        throw usage_error(fmt::format("--steps: {} and {} are more than 2^63 apart", first, last));
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace

std::optional<std::int64_t> step_from_file_name(std::string_view path) {
    // The word must not follow a letter: "commit500" holds no step.
    static const Pattern step_word(R"((?:^|[^a-z])(?:global_step|step|iteration|iter|it|epoch|batch)[_\-]?([0-9]+))",
                                   "step words", /*ignore_case=*/true);
    const std::string stem = stem_of(path);  // find_all returns views into it
    const auto found = step_word.find_all(stem);
    if (found.empty()) return std::nullopt;
    return to_int(found.back());
}

std::optional<std::int64_t> step_from_text(std::string_view line) {
    static const Pattern step_word(R"((?:^|[^a-z])(?:global_step|step|iteration|iter)\s*[:=#]?\s*([0-9]+))",
                                   "step words in text", /*ignore_case=*/true);
    const auto found = step_word.find_all(line);
    if (found.empty()) return std::nullopt;
    return to_int(found.back());
}

std::optional<std::int64_t> rank_from_file_name(std::string_view path) {
    static const Pattern rank_word(R"((?:(?:^|[^a-z])rank[_\-]?|[_\-]r)([0-9]+)(?:$|[^0-9]))", "rank words",
                                   /*ignore_case=*/true);
    const std::string stem = stem_of(path);
    const auto found = rank_word.find_all(stem);
    if (found.empty()) return std::nullopt;
    return to_int(found.back());
}

std::vector<std::int64_t> parse_step_list(std::string_view text, std::size_t count) {
    std::vector<std::int64_t> steps;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto piece =
            trim(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        const auto value = to_int(piece);
        if (!value) throw usage_error(fmt::format("--steps: '{}' is not a whole number of at most 19 digits", piece));
        if (!steps.empty() && *value <= steps.back())
            throw usage_error(fmt::format("--steps: each step must come after the one before (got {} then {})",
                                          steps.back(), *value));
        steps.push_back(*value);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
    }
    if (steps.size() != count) throw usage_error(fmt::format("--steps: {} steps for {} captures", steps.size(), count));
    check_distance(steps.front(), steps.back());
    return steps;
}

std::pair<std::int64_t, std::int64_t> parse_steps(std::string_view text) {
    const auto comma = text.find(',');
    const auto a = comma == std::string_view::npos ? std::nullopt : to_int(trim(text.substr(0, comma)));
    const auto b = comma == std::string_view::npos ? std::nullopt : to_int(trim(text.substr(comma + 1)));
    if (!a || !b)
        throw usage_error(
            fmt::format("--steps: '{}' is not two whole numbers A,B of at most 19 digits (e.g. 100,500)", text));
    if (*b <= *a)
        throw usage_error(fmt::format("--steps: the second step must come after the first (got {} then {})", *a, *b));
    check_distance(*a, *b);
    return {*a, *b};
}

Steps resolve_steps(std::string_view option, std::string_view before, std::string_view after) {
    if (!option.empty()) return {parse_steps(option), "--steps", ""};
    const auto a = step_from_file_name(before), b = step_from_file_name(after);
    if (a && b && *a < *b) return {std::make_pair(*a, *b), "file names", ""};
    Steps unknown;
    if (a && b)
        unknown.note = fmt::format(
            "the file names give steps {} and {}, not in increasing order: growth is per capture "
            "(give --steps A,B to override)",
            *a, *b);
    return unknown;
}

}  // namespace memsnap::util
