#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <mutex>
#include <tuple>

namespace memsnap::analysis {

namespace {

constexpr std::array<PathRule, 5> kNotUserCode = {{
    {R"((^|/)(site-packages|dist-packages)/)", "installed packages (also Windows Lib\\site-packages)"},
    {R"((^|/)torch/)", "the torch package, also a source checkout"},
    {R"(/lib/python[0-9.]*/)", "the Python standard library (Unix)"},
    {R"(/(Python[0-9.]*|(mini|ana)conda[0-9]*|envs/[^/]+)/Lib/)", "the Python standard library (Windows)"},
    {R"(^<frozen |^<string>$)", "frozen modules and exec'd strings"},
}};

// Compiled code only: torch._dynamo's eval_frame and torch/_compile.py wrappers also run in
// programs that never compile (torch.utils.checkpoint, zero_grad, _disable_dynamo).
constexpr std::array<PathRule, 5> kGenerated = {{
    {R"((^|/)torchinductor_[^/]*/)", "torch.compile (inductor) output code, /tmp/torchinductor_<user>/"},
    {R"(^<eval_with_key>)", "FX graph modules"},
    {R"((^|/)torch/_inductor/)", "torch.compile's inductor"},
    {R"((^|/)torch/_functorch/_aot_autograd/)", "the AOT-autograd runtime of compiled graphs"},
    {R"((^|/)\.?triton/)", "Triton kernels and their cache"},
}};

bool is_python_file(std::string_view filename) {
    return (filename.size() > 3 && filename.ends_with(".py")) || filename.starts_with("<ipython-input-") ||
           filename.starts_with("<eval_with_key>");
}

std::vector<std::string> patterns_of(std::span<const PathRule> rules) {
    std::vector<std::string> out;
    for (const auto& r : rules) out.emplace_back(r.pattern);
    return out;
}

}  // namespace

std::span<const PathRule> default_not_user_code() { return kNotUserCode; }
std::span<const PathRule> generated_code() { return kGenerated; }

std::string normalized_path(std::string_view filename) {
    std::string out(filename);
    std::replace(out.begin(), out.end(), '\\', '/');
    return out;
}

// The path tests of a frame in one set, matched in one pass over the path: a bit each, 0 for
// an option not given.
struct FrameClassifier::Compiled {
    std::optional<util::PatternSet> tests;
    std::uint64_t generated = 0, not_user_default = 0, user_added = 0, not_user_added = 0;
    bool use_defaults = true;
};

// Compiled once per process for each set of rules (in practice one: the command line's), as
// the category table is: a diff builds a StackIndex per side and one for the pair.
FrameClassifier::FrameClassifier(const SiteRules& rules) {
    using Key = std::tuple<bool, std::vector<std::string>, std::vector<std::string>>;
    static std::mutex mutex;
    static std::map<Key, std::shared_ptr<const Compiled>> compiled;
    Key key{rules.use_defaults, rules.user_code, rules.not_user_code};
    {
        const std::lock_guard lock(mutex);
        if (const auto it = compiled.find(key); it != compiled.end()) {
            compiled_ = it->second;
            return;
        }
    }
    auto made = std::make_shared<Compiled>();
    auto& c = *made;
    c.use_defaults = rules.use_defaults;
    std::vector<std::string> joined;
    // Each list joined and checked on its own first (any_of), so an error names its option.
    const auto add = [&](const std::vector<std::string>& patterns, std::string_view origin) -> std::uint64_t {
        const auto any = util::Pattern::any_of(patterns, origin);
        if (!any) return 0;
        joined.push_back(any->text());
        return std::uint64_t{1} << (joined.size() - 1);
    };
    c.generated = add(patterns_of(generated_code()), "generated-code rule");
    c.not_user_default = add(patterns_of(default_not_user_code()), "default rule");
    c.user_added = add(rules.user_code, "--user-code");
    c.not_user_added = add(rules.not_user_code, "--not-user-code");
    c.tests.emplace(std::vector<std::string_view>(joined.begin(), joined.end()), "site rule");
    const std::lock_guard lock(mutex);
    compiled_ = compiled.try_emplace(std::move(key), std::move(made)).first->second;
}

FrameClassifier::~FrameClassifier() = default;
FrameClassifier::FrameClassifier(FrameClassifier&&) noexcept = default;

FrameFlags FrameClassifier::classify(std::string_view filename) const {
    FrameFlags flags;
    flags.python = is_python_file(filename);
    if (!flags.python) return flags;  // C++ frames and "??" are never user code
    const auto& c = *compiled_;
    const std::uint64_t matched = filename.find('\\') == std::string_view::npos
                                      ? c.tests->matches(filename)
                                      : c.tests->matches(normalized_path(filename));
    flags.generated = matched & c.generated;
    if (matched & c.not_user_added) return flags;
    if (matched & c.user_added) {
        flags.user = true;
        return flags;
    }
    flags.user = c.use_defaults && !flags.generated && !(matched & c.not_user_default);
    return flags;
}

std::string SiteKey::label() const {
    std::string out;
    if (filename.empty())
        out = name;
    else if (line == 0)
        out = fmt::format("{} {}", filename, name);
    else
        out = fmt::format("{}:{} {}", filename, line, name);
    if (compiled_graph) out += " (torch.compile graph)";
    return out;
}

SitePick pick_site(std::span<const FrameFlags> stack) {
    std::optional<std::size_t> python, generated;
    for (std::size_t i = 0; i < stack.size(); ++i) {
        const auto& f = stack[i];
        if (f.user) return {i, generated.has_value()};
        if (f.generated) {
            if (!generated) generated = i;
        } else if (f.python && !python) {
            python = i;
        }
    }
    if (python) return {python, generated && *generated < *python};
    return {generated, false};
}

}  // namespace memsnap::analysis
