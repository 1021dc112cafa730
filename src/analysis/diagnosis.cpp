#include <memsnap/analysis/diagnosis.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <map>
#include <regex>

namespace memsnap::analysis {

namespace {

struct Pattern {
    const char* id;
    const char* regex;  // matched against "filename name" of each growing frame
    const char* summary;
    const char* fix;
};

// Order matters: the first pattern whose frames appear names the site.
const Pattern site_patterns[] = {
    {"dataset", R"(__getitem__|__getitems__|collate|[Dd]ataset|[Dd]ata[Ll]oader|(^|/)data\.py )",
     "likely CUDA tensors created or cached in the dataset (Dataset.__getitem__ or a "
     "collate function): every DataLoader worker keeps its own copies",
     "do CPU-only work in the dataset and move batches to the GPU in the training loop; do not "
     "cache CUDA tensors on the dataset"},
    {"logging",
     R"(add_image|add_scalar|add_histogram|add_figure|SummaryWriter|tensorboard|wandb|mlflow|(^|/)log(ger|ging|s)?\.py |[ _]log(_[a-z_]+)?$|logger)",
     "likely logging without detach: a logged tensor keeps its autograd graph alive",
     "log `tensor.detach().cpu()` or `.item()` instead of the tensor"},
    {"augmentation_cache", R"(augment|visuali[sz]|[Cc]ache)",
     "likely an unbounded cache in augmentation or visualisation code holding GPU tensors",
     "store `tensor.detach()` (or a CPU copy) and bound the cache, e.g. keep the last N"},
    {"backward", R"(backward|autograd::Engine|run_backward|_engine_run_backward)",
     "likely graphs kept by backward(retain_graph=True) or gradients accumulated without reset",
     "drop retain_graph=True unless a second backward really needs it; zero or free gradients "
     "between accumulation windows"},
};

std::string per_step_text(double bytes_per_step, bool steps_known) {
    return fmt::format("{}/{}", util::signed_bytes(static_cast<std::int64_t>(bytes_per_step)),
                       steps_known ? "step" : "capture");
}

}  // namespace

bool is_forward_frame(const FrameText& frame) {
    return frame.name == "forward" || frame.name == "_call_impl" ||
           frame.filename.find("torch/nn/modules/") != std::string::npos;
}

Diagnosis diagnose_site(const SiteChange& site, const std::vector<FrameText>& growth_frames,
                        const std::optional<std::pair<std::int64_t, std::int64_t>>& steps) {
    Diagnosis d;
    if (site.verdict == SiteVerdict::freed || site.verdict == SiteVerdict::stable) return d;
    const bool steps_known = steps.has_value();
    if (site.verdict == SiteVerdict::shape_growth) {
        d.pattern = "growing_tensor";
        d.summary =
            "likely a tensor that grows over time (torch.cat in a loop, a growing cache or "
            "buffer): the same number of blocks got bigger";
        d.fix = "preallocate to the final size, keep a fixed window, or detach and trim the buffer";
        d.evidence.push_back(fmt::format("{} blocks before and after; bytes {} ({})",
                                         site.after_blocks, util::signed_bytes(site.delta_bytes),
                                         per_step_text(site.growth_bytes_per_step, steps_known)));
        return d;
    }
    d.evidence.push_back(fmt::format("{:+} blocks ({} new, {} gone), {} ({})", site.delta_blocks,
                                     site.new_blocks, site.gone_blocks,
                                     util::signed_bytes(site.delta_bytes),
                                     per_step_text(site.growth_bytes_per_step, steps_known)));
    for (const auto& pattern : site_patterns) {
        const std::regex re(pattern.regex);
        for (const auto& frame : growth_frames) {
            const std::string text = frame.filename + " " + frame.name;
            if (std::regex_search(text, re)) {
                d.pattern = pattern.id;
                d.summary = pattern.summary;
                d.fix = pattern.fix;
                d.evidence.push_back(fmt::format("growing stack passes through {}:{} {}",
                                                 frame.filename, frame.line, frame.name));
                return d;
            }
        }
    }
    d.pattern = "retained_tensors";
    d.summary =
        "likely tensors allocated here are kept alive between the captures by a reference "
        "(a list, dict, attribute or global), e.g. `history.append(output)`";
    d.fix =
        "store `.item()` or `.detach().cpu()` instead of the tensor, or bound/clear the container";
    if (steps_known && steps->second != steps->first) {
        const double per_step = static_cast<double>(site.delta_blocks) /
                                static_cast<double>(steps->second - steps->first);
        d.evidence.push_back(fmt::format("{:.3g} new live blocks per step", per_step));
    }
    return d;
}

Diagnosis diagnose_overall(SnapshotDiff& diff,
                           const std::vector<std::vector<FrameText>>& growth_frames_by_site) {
    Diagnosis d;
    const bool steps_known = diff.steps.has_value();
    // Many forward-pass sites growing by the same block count: one graph kept per step.
    std::map<std::int64_t, std::vector<std::size_t>> forward_leaks_by_blocks;
    for (std::size_t i = 0; i < diff.sites.size(); ++i) {
        const auto& s = diff.sites[i];
        if (s.verdict != SiteVerdict::leak || s.delta_blocks <= 0) continue;
        bool forward = false;
        for (const auto& f : growth_frames_by_site[i]) forward |= is_forward_frame(f);
        if (forward) forward_leaks_by_blocks[s.delta_blocks].push_back(i);
    }
    const std::vector<std::size_t>* alike = nullptr;
    for (const auto& [blocks, sites] : forward_leaks_by_blocks)
        if (sites.size() >= 3 && (alike == nullptr || sites.size() > alike->size())) alike = &sites;
    if (alike != nullptr && diff.verdict.verdict == Verdict::leak) {
        std::int64_t bytes = 0, blocks = 0;
        for (std::size_t i : *alike) {
            bytes += diff.sites[i].delta_bytes;
            blocks += diff.sites[i].delta_blocks;
        }
        d.pattern = "retained_graph";
        d.summary = fmt::format(
            "likely a retained autograd graph: {} forward-pass sites each gained {} blocks, "
            "{} blocks and {} in all. Something keeps a tensor with grad_fn alive across steps: "
            "`losses.append(loss)`, stored activations or outputs, validation without "
            "torch.no_grad(), or `best = min(best, loss)`",
            alike->size(), diff.sites[alike->front()].delta_blocks, blocks,
            util::signed_bytes(bytes));
        d.fix =
            "keep Python numbers or detached copies: `loss.item()`, `out.detach().cpu()`; wrap "
            "evaluation in `with torch.no_grad():`";
        if (steps_known) {
            const double span = static_cast<double>(diff.steps->second - diff.steps->first);
            d.evidence.push_back(fmt::format("{:.3g} blocks and {} per step over these sites",
                                             static_cast<double>(blocks) / span,
                                             util::signed_bytes(static_cast<std::int64_t>(
                                                 static_cast<double>(bytes) / span))));
        }
        if (diff.convergence)
            d.evidence.push_back(fmt::format("the growth converges in {}:{} {} ({:.0f}% of it)",
                                             diff.convergence->frame.filename,
                                             diff.convergence->frame.line,
                                             diff.convergence->frame.name,
                                             diff.convergence->share * 100));
        for (std::size_t i : *alike) {
            auto& site = diff.sites[i].diagnosis;
            site.pattern = "retained_graph";
            site.summary =
                "likely part of a retained autograd graph (see the summary): these blocks are "
                "saved activations of a forward pass that is never freed";
            site.fix = d.fix;
        }
        return d;
    }
    switch (diff.verdict.verdict) {
        case Verdict::leak: {
            const SiteChange* top = nullptr;
            for (const auto& s : diff.sites)
                if (s.delta_bytes > 0) {
                    top = &s;
                    break;
                }
            if (top != nullptr) {
                d = top->diagnosis;
                d.summary = fmt::format("leading site {} ({:.0f}% of the growth): {}",
                                        top->site.label(), top->share * 100,
                                        top->diagnosis.summary);
            }
            break;
        }
        case Verdict::fragmentation:
            d.pattern = "fragmentation";
            d.summary =
                "fragmentation, not a leak: live blocks did not grow, but the allocator holds "
                "more partly used segments it cannot release";
            d.fix =
                "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; keep batch shapes "
                "uniform (pad or bucket sequence lengths)";
            break;
        case Verdict::cache_growth:
            d.pattern = "cache_growth";
            d.summary =
                "cache growth, not a leak: live memory is flat and the extra reserved memory is "
                "free whole segments the caching allocator keeps for reuse";
            d.fix =
                "nothing to fix unless other processes need the memory; torch.cuda.empty_cache() "
                "returns it";
            break;
        case Verdict::stable:
            d.summary = "no significant growth between the captures";
            break;
        case Verdict::shrink:
            d.summary = "memory shrank between the captures";
            break;
    }
    return d;
}

}  // namespace memsnap::analysis
