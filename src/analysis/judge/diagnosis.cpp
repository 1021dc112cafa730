#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <array>

namespace memsnap::analysis {

namespace {

constexpr std::array<std::string_view, 19> kPatterns = {"dataset",
                                                        "logging",
                                                        "augmentation_cache",
                                                        "retained_tensors",
                                                        "retained_graph",
                                                        "retained_graph_site",
                                                        "gradient_growth",
                                                        "growing_tensor",
                                                        "optimizer_first_step",
                                                        "workspace_warmup",
                                                        "autocast_cache",
                                                        "one_time_growth",
                                                        "sawtooth",
                                                        "fragmentation",
                                                        "cache_growth",
                                                        "device_full",
                                                        "fragmentation_oom",
                                                        "other_process",
                                                        "single_huge_request"};
static_assert(kPatterns.size() == static_cast<std::size_t>(Pattern::single_huge_request) + 1);

constexpr std::array<Pattern, kPatterns.size()> kAll = {Pattern::dataset,
                                                        Pattern::logging,
                                                        Pattern::augmentation_cache,
                                                        Pattern::retained_tensors,
                                                        Pattern::retained_graph,
                                                        Pattern::retained_graph_site,
                                                        Pattern::gradient_growth,
                                                        Pattern::growing_tensor,
                                                        Pattern::optimizer_first_step,
                                                        Pattern::workspace_warmup,
                                                        Pattern::autocast_cache,
                                                        Pattern::one_time_growth,
                                                        Pattern::sawtooth,
                                                        Pattern::fragmentation,
                                                        Pattern::cache_growth,
                                                        Pattern::device_full,
                                                        Pattern::fragmentation_oom,
                                                        Pattern::other_process,
                                                        Pattern::single_huge_request};

constexpr std::array<std::string_view, 26> kAdvice = {"leak_kept",
                                                      "leak_references",
                                                      "leak_detach",
                                                      "leak_take_snapshots",
                                                      "caveat_same_workload",
                                                      "one_time_not_leak",
                                                      "compare_after_warmup",
                                                      "shape_bucket",
                                                      "growth_cannot_tell",
                                                      "growth_one_run",
                                                      "growth_summaries",
                                                      "growth_order",
                                                      "fragmentation_not_leak",
                                                      "fragmentation_fix",
                                                      "cache_not_leak",
                                                      "cache_fix",
                                                      "shrink_nothing",
                                                      "stable_nothing",
                                                      "ooms_without_growth",
                                                      "retries_near_limit",
                                                      "caveat_one_log",
                                                      "leak_kept_summaries",
                                                      "cache_levels",
                                                      "shrink_levels",
                                                      "order_contradicted",
                                                      "cache_levels_live_lower"};
static_assert(kAdvice.size() == static_cast<std::size_t>(Advice::cache_levels_live_lower) + 1);

// Patterns recognised by name in user frames only: C++ frames and library code say nothing
// about the user's intent (autocast's cached_cast is not an "augmentation cache").
struct KeywordPattern {
    Pattern pattern;
    const char* regex;  // on "filename name" of user frames of the growing stacks
};
constexpr KeywordPattern kKeywords[] = {
    {Pattern::dataset, R"(__getitem__|__getitems__|collate|[Dd]ataset|[Dd]ata[Ll]oader|(^|/)data\.py )"},
    {Pattern::logging,
     R"(add_image|add_scalar|add_histogram|add_figure|SummaryWriter|tensorboard|wandb|mlflow|(^|/)log(ger|ging|s)?\.py |[ _]log(_[a-z_]+)?$|logger)"},
    {Pattern::augmentation_cache, R"(augment|visuali[sz]|[Cc]ache)"},
};

Diagnosis with(Pattern pattern, Fact fact) {
    Diagnosis d;
    d.pattern = pattern;
    d.evidence.push_back(std::move(fact));
    return d;
}

Diagnosis diagnose_leak(const SiteFacts& s) {
    if (s.category == Category::gradient) return with(Pattern::gradient_growth, site_counts(s));
    static const auto compiled = [] {
        std::vector<std::pair<Pattern, util::Pattern>> out;
        for (const auto& k : kKeywords) out.emplace_back(k.pattern, util::Pattern(k.regex, "diagnosis rule"));
        return out;
    }();
    for (const auto& [pattern, re] : compiled)
        for (const auto& frame : s.user_frames)
            if (re.search(fmt::format("{} {}", frame.filename, frame.name))) {
                auto d = with(pattern, site_counts(s));
                d.evidence.push_back(
                    Fact(FactKind::passes_user_code)
                        .text("frame", fmt::format("{}:{} {}", frame.filename, frame.line, frame.name)));
                return d;
            }
    auto d = with(Pattern::retained_tensors, site_counts(s));
    if (s.steps_known && s.step_distance > 0)
        d.evidence.push_back(
            Fact(FactKind::blocks_per_step)
                .real("rate", static_cast<double>(s.delta_blocks) / static_cast<double>(s.step_distance)));
    return d;
}

Diagnosis diagnose_shape(const SiteFacts& s) {
    if (s.delta_blocks == 0)
        return with(Pattern::growing_tensor, Fact(FactKind::site_same_blocks)
                                                 .count("blocks", s.after_blocks)
                                                 .bytes("delta_bytes", s.delta_bytes)
                                                 .real("rate", s.growth_bytes_per_step)
                                                 .flag("per_step", s.steps_known));
    return with(Pattern::growing_tensor, Fact(FactKind::site_fewer_blocks)
                                             .count("before", s.before_blocks)
                                             .count("after", s.after_blocks)
                                             .bytes("delta_bytes", s.delta_bytes)
                                             .real("rate", s.growth_bytes_per_step)
                                             .flag("per_step", s.steps_known));
}

Diagnosis diagnose_first_appearance(const SiteFacts& s) {
    const Pattern p = s.category == Category::workspace        ? Pattern::workspace_warmup
                      : s.category == Category::autocast_cache ? Pattern::autocast_cache
                                                               : Pattern::optimizer_first_step;
    auto fact = site_counts(s);
    fact.kind = FactKind::site_appears;
    fact.text("category", std::string(to_string(s.category)));
    return with(p, std::move(fact));
}

}  // namespace

std::string_view to_string(Pattern pattern) { return kPatterns[static_cast<std::size_t>(pattern)]; }
std::span<const Pattern> all_patterns() { return kAll; }
std::string_view to_string(Advice advice) { return kAdvice[static_cast<std::size_t>(advice)]; }

Fact site_counts(const SiteFacts& s) {
    return Fact(FactKind::site_counts)
        .count("delta_blocks", s.delta_blocks)
        .count("new", s.new_blocks)
        .count("gone", s.gone_blocks)
        .count("before", s.before_blocks)
        .count("after", s.after_blocks)
        .bytes("delta_bytes", s.delta_bytes)
        .real("rate", s.growth_bytes_per_step)
        .flag("per_step", s.steps_known);
}

Diagnosis diagnose_site(const SiteFacts& s) {
    switch (s.verdict) {
        case Verdict::leak:
            return diagnose_leak(s);
        case Verdict::shape_growth:
            return diagnose_shape(s);
        case Verdict::one_time_growth:
            return diagnose_first_appearance(s);
        default:
            return {};
    }
}

void AdviceContext::read_live_change(const TotalsReading& reading) {
    const auto& allocated = reading.allocated;
    live_flat = allocated && allocated->change == Change::flat && !allocated->uncertain;
    live_fell = allocated && allocated->change == Change::falls;
}

std::vector<Advice> advice_for(Verdict verdict, const AdviceContext& c) {
    std::vector<Advice> out;
    const bool snapshots = c.from_snapshots || c.snapshot_inputs;  // never advice about summary tables
    if (c.caveat && is_behaviour(verdict))
        out.push_back(snapshots ? Advice::caveat_same_workload : Advice::caveat_one_log);
    switch (verdict) {
        case Verdict::leak:
            if (c.from_snapshots)
                out.insert(out.end(), {Advice::leak_kept, Advice::leak_references, Advice::leak_detach});
            else
                out.insert(out.end(), {Advice::leak_kept_summaries, Advice::leak_take_snapshots});
            break;
        case Verdict::one_time_growth:
        case Verdict::warmup:
            out.insert(out.end(), {Advice::one_time_not_leak, Advice::compare_after_warmup});
            break;
        case Verdict::shape_growth:
            // A fix only for one run judged; between levels, bigger tensors may be another input.
            if (c.behaviour && !c.one_process_ruled_out) out.push_back(Advice::shape_bucket);
            break;
        case Verdict::growth:
        case Verdict::differs:
            // Live memory the same, cache not: the levels differ by what an allocator keeps.
            out.push_back(c.live_flat ? Advice::cache_levels : Advice::growth_cannot_tell);
            out.push_back(c.order_contradicted ? Advice::order_contradicted
                          : !c.order_known     ? Advice::growth_order
                          : snapshots          ? Advice::growth_one_run
                                               : Advice::growth_summaries);
            break;
        case Verdict::fragmentation:
            out.insert(out.end(), {Advice::fragmentation_not_leak, Advice::fragmentation_fix});
            break;
        case Verdict::cache_growth:
            if (!c.behaviour) {  // separate runs: their allocators cached up to different peaks
                // Cache growth is also reserved growing while allocated falls: then live memory
                // is not the same, and said to be only when it is flat beyond doubt.
                out.push_back(c.live_fell   ? Advice::cache_levels_live_lower
                              : c.live_flat ? Advice::cache_levels
                                            : Advice::growth_cannot_tell);
                break;
            }
            out.push_back(Advice::cache_not_leak);
            if (!c.one_process_ruled_out) out.push_back(Advice::cache_fix);
            break;
        case Verdict::shrink:
            out.push_back(c.behaviour ? Advice::shrink_nothing : Advice::shrink_levels);
            break;
        case Verdict::stable:
            out.push_back(Advice::stable_nothing);
            break;
        default:
            break;
    }
    if (c.new_ooms && (verdict == Verdict::stable || verdict == Verdict::shrink))
        out.push_back(Advice::ooms_without_growth);
    if (c.new_retries) out.push_back(Advice::retries_near_limit);
    return out;
}

}  // namespace memsnap::analysis
