#pragma once
// Where an allocation "comes from" for a user: the innermost frame of their own code.
// The one definition of user code lives here.

#include <memsnap/snapshot/model.hpp>

#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::analysis {

// A frame is user code when its file matches `user_code` and not `not_user_code`.
// Defaults: any Python file (or notebook cell) outside site-packages/dist-packages, the
// torch package and the Python standard library. C++ frames and "??" never qualify.
struct SiteRules {
    static constexpr const char* default_user_code = R"(\.py$|^<ipython-input-)";
    static constexpr const char* default_not_user_code =
        R"((^|/)(site-packages|dist-packages)/|(^|/)torch/|/lib/python[0-9.]*/|^<frozen |^<string>$)";
    std::string user_code = default_user_code;
    std::string not_user_code = default_not_user_code;
};

// The rule itself, compiled once: which frame files are Python, which are user code.
class UserCodeRule {
public:
    // Throws memsnap::Error (usage) when a regex does not compile.
    explicit UserCodeRule(const SiteRules& rules);
    // A Python source file (".py") or a notebook cell ("<ipython-input-...").
    static bool is_python(std::string_view filename);
    bool is_user_code(std::string_view filename) const;

private:
    std::regex user_, not_user_;
};

// How a site is labelled when a stack has no user frame.
inline constexpr const char* no_stack_site = "<no stack>";
inline constexpr const char* no_python_site = "<no Python frame>";

// A site as text, so that sites of two captures compare (frame ids are per capture).
struct SiteKey {
    std::string filename;  // empty for the synthetic sites
    std::string name;      // function, or the synthetic label
    std::int64_t line = 0;
    bool user_code = false;  // false: named after the innermost Python frame or synthetic
    auto operator<=>(const SiteKey&) const = default;
    std::string label() const;  // "file:line name"
};

class SiteClassifier {
public:
    // Throws memsnap::Error (usage) when a regex does not compile.
    SiteClassifier(const snapshot::Snapshot& snap, const SiteRules& rules);

    bool is_python(snapshot::FrameId frame) const;
    bool is_user_code(snapshot::FrameId frame) const;
    // The site frame of a stack: innermost user frame, else innermost Python frame.
    std::optional<snapshot::FrameId> site_frame(snapshot::StackId stack) const;
    SiteKey site_of(snapshot::StackId stack) const;

private:
    const snapshot::Snapshot& snap_;
    std::vector<std::uint8_t> frame_class_;  // bit 0 python, bit 1 user code
};

}  // namespace memsnap::analysis
