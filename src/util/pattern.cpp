#include <memsnap/error.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>
#include <re2/re2.h>
#include <re2/set.h>

namespace memsnap::util {

namespace {

// Errors are reported by the caller, naming the option or rule, never logged by RE2.
RE2::Options quiet_options() {
    RE2::Options options;
    options.set_log_errors(false);
    return options;
}

}  // namespace

Pattern::Pattern(std::string_view pattern, std::string_view origin, bool ignore_case) : text_(pattern) {
    RE2::Options options = quiet_options();
    options.set_case_sensitive(!ignore_case);
    auto re = std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
    if (!re->ok())
        throw usage_error(fmt::format("{}: invalid regular expression '{}': {}", origin, pattern, re->error()));
    re_ = std::move(re);
}

std::optional<Pattern> Pattern::any_of(const std::vector<std::string>& patterns, std::string_view origin,
                                       bool ignore_case) {
    if (patterns.empty()) return std::nullopt;
    // Each alternative is checked on its own first, so an error names the pattern the user
    // wrote rather than the joined one.
    std::string joined;
    for (const auto& p : patterns) {
        Pattern(p, origin, ignore_case);
        joined += (joined.empty() ? "(?:" : "|(?:") + p + ")";
    }
    return Pattern(joined, origin, ignore_case);
}

bool Pattern::search(std::string_view text) const {
    return RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

std::vector<std::string_view> Pattern::find_all(std::string_view text) const {
    std::vector<std::string_view> out;
    re2::StringPiece input(text.data(), text.size());
    re2::StringPiece piece;
    const bool has_group = re_->NumberOfCapturingGroups() > 0;
    while (!input.empty()) {
        const char* before = input.data();
        re2::StringPiece whole;
        bool found = false;
        if (has_group) {
            found = RE2::FindAndConsume(&input, *re_, &piece);
        } else {
            // Without a group the whole match is wanted: match at the first possible place.
            re2::StringPiece rest = input;
            found = re_->Match(rest, 0, rest.size(), RE2::UNANCHORED, &whole, 1);
            if (found) {
                piece = whole;
                input.remove_prefix(static_cast<std::size_t>(whole.data() + whole.size() - input.data()));
            }
        }
        if (!found) break;
        out.emplace_back(piece.data(), piece.size());
        if (input.data() == before) input.remove_prefix(1);  // an empty match must still advance
    }
    return out;
}

struct PatternSet::Compiled {
    explicit Compiled(const RE2::Options& options) : set(options, re2::RE2::UNANCHORED) {}
    re2::RE2::Set set;
    // One pattern at a time, when the set cannot answer (its DFA ran out of memory).
    std::vector<Pattern> each;
};

PatternSet::PatternSet(const std::vector<std::string_view>& patterns, std::string_view origin)
    : compiled_(std::make_unique<Compiled>(quiet_options())) {
    if (patterns.size() > 64) throw usage_error(fmt::format("{}: more than 64 patterns in one set", origin));
    for (const auto p : patterns) {
        compiled_->each.emplace_back(p, origin);  // throws, naming the pattern, when it is invalid
        std::string error;
        if (compiled_->set.Add(re2::StringPiece(p.data(), p.size()), &error) < 0)
            throw usage_error(fmt::format("{}: invalid regular expression '{}': {}", origin, p, error));
    }
    if (!compiled_->set.Compile()) throw usage_error(fmt::format("{}: the patterns do not compile together", origin));
}

PatternSet::~PatternSet() = default;
PatternSet::PatternSet(PatternSet&&) noexcept = default;
PatternSet& PatternSet::operator=(PatternSet&&) noexcept = default;

std::uint64_t PatternSet::matches(std::string_view text) const {
    std::uint64_t bits = 0;
    if (compiled_->each.empty()) return bits;
    std::vector<int> matched;
    re2::RE2::Set::ErrorInfo error;
    if (compiled_->set.Match(re2::StringPiece(text.data(), text.size()), &matched, &error)) {
        for (const int i : matched) bits |= std::uint64_t{1} << i;
    } else if (error.kind != re2::RE2::Set::kNoError) {
        for (std::size_t i = 0; i < compiled_->each.size(); ++i)
            if (compiled_->each[i].search(text)) bits |= std::uint64_t{1} << i;
    }
    return bits;
}

}  // namespace memsnap::util
