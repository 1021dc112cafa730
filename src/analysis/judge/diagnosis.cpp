#include <memsnap/analysis/judge/advice.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

namespace memsnap::analysis {

namespace {

// Patterns recognised by name in user frames only: C++ frames and library code say nothing
// about the user's intent (autocast's cached_cast is not an "augmentation cache").
struct KeywordPattern {
    const char* id;
    const char* regex;  // on "filename name" of user frames of the growing stacks
};
constexpr KeywordPattern kKeywords[] = {
    {"dataset", R"(__getitem__|__getitems__|collate|[Dd]ataset|[Dd]ata[Ll]oader|(^|/)data\.py )"},
    {"logging",
     R"(add_image|add_scalar|add_histogram|add_figure|SummaryWriter|tensorboard|wandb|mlflow|(^|/)log(ger|ging|s)?\.py |[ _]log(_[a-z_]+)?$|logger)"},
    {"augmentation_cache", R"(augment|visuali[sz]|[Cc]ache)"},
};

std::string counts_text(const SiteFacts& s) {
    return fmt::format("{} blocks ({} new, {} gone): {} → {} blocks, {} ({})", util::signed_count(s.delta_blocks),
                       s.new_blocks, s.gone_blocks, s.before_blocks, s.after_blocks, util::signed_bytes(s.delta_bytes),
                       util::rate(s.growth_bytes_per_step, s.steps_known));
}

Diagnosis diagnose_leak(const SiteFacts& s) {
    if (s.category == Category::gradient) {
        auto d = from_pattern("gradient_growth");
        d.evidence.push_back(counts_text(s));
        return d;
    }
    static const auto compiled = [] {
        std::vector<std::pair<const char*, util::Pattern>> out;
        for (const auto& k : kKeywords) out.emplace_back(k.id, util::Pattern(k.regex, "diagnosis rule"));
        return out;
    }();
    for (const auto& [id, re] : compiled)
        for (const auto& frame : s.user_frames)
            if (re.search(fmt::format("{} {}", frame.filename, frame.name))) {
                auto d = from_pattern(id);
                d.evidence.push_back(counts_text(s));
                d.evidence.push_back(fmt::format("growing stack passes through user code {}:{} {}", frame.filename,
                                                 frame.line, frame.name));
                return d;
            }
    auto d = from_pattern("retained_tensors");
    d.evidence.push_back(counts_text(s));
    if (s.steps_known && s.step_distance > 0)
        d.evidence.push_back(
            fmt::format("{} new live blocks per step",
                        util::count_rate(static_cast<double>(s.delta_blocks) / static_cast<double>(s.step_distance))));
    return d;
}

Diagnosis diagnose_shape(const SiteFacts& s) {
    auto d = from_pattern("growing_tensor");
    if (s.delta_blocks == 0)
        d.evidence.push_back(fmt::format("the same {} blocks before and after hold {} more ({})", s.after_blocks,
                                         util::human_bytes(s.delta_bytes),
                                         util::rate(s.growth_bytes_per_step, s.steps_known)));
    else
        d.evidence.push_back(fmt::format("fewer blocks ({} → {}) hold {} more ({})", s.before_blocks, s.after_blocks,
                                         util::human_bytes(s.delta_bytes),
                                         util::rate(s.growth_bytes_per_step, s.steps_known)));
    return d;
}

Diagnosis diagnose_one_time(const SiteFacts& s) {
    const char* id = s.category == Category::workspace        ? "workspace_warmup"
                     : s.category == Category::autocast_cache ? "autocast_cache"
                                                              : "optimizer_first_step";
    auto d = from_pattern(id);
    d.evidence.push_back(fmt::format("{} blocks of {} appear, none were there before: {}", s.new_blocks,
                                     to_string(s.category), counts_text(s)));
    return d;
}

}  // namespace

Diagnosis from_pattern(std::string_view id) {
    const auto& text = advice::pattern(id);
    return {std::string(text.id), std::string(text.summary), std::string(text.fix), {}};
}

Diagnosis diagnose_site(const SiteFacts& s) {
    switch (s.verdict) {
        case SiteVerdict::leak:
            return diagnose_leak(s);
        case SiteVerdict::shape_growth:
            return diagnose_shape(s);
        case SiteVerdict::one_time:
            return diagnose_one_time(s);
        case SiteVerdict::growth: {
            auto d = from_pattern(s.category == Category::autocast_cache ? "autocast_cache"
                                  : s.one_process                        ? "below_noise"
                                                                         : "different_workload");
            d.evidence.push_back(counts_text(s));
            if (!s.growth_reason.empty()) d.evidence.push_back(s.growth_reason);
            return d;
        }
        case SiteVerdict::freed:
        case SiteVerdict::stable:
            return {};
    }
    return {};
}

}  // namespace memsnap::analysis
