#include <memsnap/analysis/sites.hpp>
#include <memsnap/error.hpp>

#include <fmt/format.h>

namespace memsnap::analysis {

namespace {

std::regex compile(const std::string& pattern, const char* option) {
    try {
        return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw usage_error(fmt::format("{}: invalid regular expression '{}': {}", option, pattern,
                                      e.what()));
    }
}

}  // namespace

std::string SiteKey::label() const {
    if (filename.empty()) return name;
    return fmt::format("{}:{} {}", filename, line, name);
}

UserCodeRule::UserCodeRule(const SiteRules& rules)
    : user_(compile(rules.user_code, "--user-code")),
      not_user_(compile(rules.not_user_code, "--not-user-code")) {}

bool UserCodeRule::is_python(std::string_view filename) {
    return (filename.size() > 3 && filename.ends_with(".py")) ||
           filename.starts_with("<ipython-input-");
}

bool UserCodeRule::is_user_code(std::string_view filename) const {
    return is_python(filename) && std::regex_search(filename.begin(), filename.end(), user_) &&
           !std::regex_search(filename.begin(), filename.end(), not_user_);
}

SiteClassifier::SiteClassifier(const snapshot::Snapshot& snap, const SiteRules& rules)
    : snap_(snap) {
    const UserCodeRule rule(rules);
    // Classify each distinct frame once: regexes are slow, frames are few.
    frame_class_.resize(snap.frames.size());
    for (snapshot::FrameId f = 0; f < snap.frames.size(); ++f) {
        const auto filename = snap.str(snap.frames[f].filename);
        const bool python = UserCodeRule::is_python(filename);
        const bool user_code = python && rule.is_user_code(filename);
        frame_class_[f] = static_cast<std::uint8_t>((python ? 1 : 0) | (user_code ? 2 : 0));
    }
}

bool SiteClassifier::is_python(snapshot::FrameId frame) const { return frame_class_[frame] & 1; }
bool SiteClassifier::is_user_code(snapshot::FrameId frame) const { return frame_class_[frame] & 2; }

std::optional<snapshot::FrameId> SiteClassifier::site_frame(snapshot::StackId stack) const {
    std::optional<snapshot::FrameId> innermost_python;
    for (snapshot::FrameId f : snap_.stacks.frames(stack)) {
        if (is_user_code(f)) return f;
        if (!innermost_python && is_python(f)) innermost_python = f;
    }
    return innermost_python;
}

SiteKey SiteClassifier::site_of(snapshot::StackId stack) const {
    SiteKey key;
    if (stack == 0) {
        key.name = no_stack_site;
        return key;
    }
    const auto frame = site_frame(stack);
    if (!frame) {
        key.name = no_python_site;
        return key;
    }
    const auto& f = snap_.frames[*frame];
    key.filename = snap_.str(f.filename);
    key.name = snap_.str(f.name);
    key.line = f.line;
    key.user_code = is_user_code(*frame);
    return key;
}

}  // namespace memsnap::analysis
