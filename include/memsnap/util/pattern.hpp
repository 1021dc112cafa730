#pragma once
// Regular expressions for rules and user patterns. Backed by RE2, which matches in time linear
// in the text and never recurses, so a frame name of any length taken from an untrusted file
// cannot exhaust the stack or the clock. Compile once, match many times.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace memsnap::util {

class Pattern {
  public:
    // Throws Error (usage) naming `origin` (an option such as "--hide", or a rule) when the
    // pattern is invalid or uses what RE2 does not support (backreferences, lookaround).
    Pattern(std::string_view pattern, std::string_view origin, bool ignore_case = false);
    // One pattern that matches where any of `patterns` matches; nullopt when there are none.
    static std::optional<Pattern> any_of(const std::vector<std::string>& patterns, std::string_view origin,
                                         bool ignore_case = false);

    // True when the pattern matches anywhere in `text`.
    bool search(std::string_view text) const;
    // The first capture group of every non-overlapping match, in order (whole matches when the
    // pattern has no group).
    std::vector<std::string_view> find_all(std::string_view text) const;
    const std::string& text() const { return text_; }

  private:
    std::shared_ptr<const re2::RE2> re_;  // shared: compiled programs are immutable
    std::string text_;
};

// Up to 64 patterns matched in one pass over a text: a bit per pattern that matches anywhere
// in it. For rule tables checked against every distinct file or function name of a capture,
// where one pattern at a time read each name once per rule.
class PatternSet {
  public:
    // Throws Error (usage) naming `origin` as Pattern does.
    PatternSet(const std::vector<std::string_view>& patterns, std::string_view origin);
    ~PatternSet();
    PatternSet(PatternSet&&) noexcept;
    PatternSet& operator=(PatternSet&&) noexcept;

    std::uint64_t matches(std::string_view text) const;

  private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
};

}  // namespace memsnap::util
