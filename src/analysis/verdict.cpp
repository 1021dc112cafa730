#include <memsnap/analysis/verdict.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::analysis {

std::string_view to_string(Verdict verdict) {
    switch (verdict) {
        case Verdict::leak: return "leak";
        case Verdict::fragmentation: return "fragmentation";
        case Verdict::cache_growth: return "cache_growth";
        case Verdict::stable: return "stable";
        case Verdict::shrink: return "shrink";
    }
    return "unknown";
}

std::string_view to_string(Change change) {
    switch (change) {
        case Change::grows: return "grows";
        case Change::flat: return "flat";
        case Change::falls: return "falls";
    }
    return "unknown";
}

std::int64_t noise_threshold(ByteRange before) {
    constexpr std::int64_t one_mib = std::int64_t{1} << 20;
    return std::max(one_mib, std::max<std::int64_t>(before.high, 0) / 200);
}

ChangeCall judge_change(ByteRange before, ByteRange delta) {
    ChangeCall call;
    call.threshold = noise_threshold(before);
    if (delta.low > call.threshold) {
        call.change = Change::grows;
    } else if (delta.high < -call.threshold) {
        call.change = Change::falls;
    } else {
        call.change = Change::flat;
        call.uncertain = delta.high > call.threshold || delta.low < -call.threshold;
    }
    return call;
}

namespace {

std::string describe(std::string_view name, ByteRange before, ByteRange delta, const ChangeCall& call) {
    std::string text = fmt::format("{}: {} → change {} ({}; noise threshold {})", name,
                                   stats::format_range(before, true), stats::format_delta(delta, true),
                                   to_string(call.change), util::human_bytes(call.threshold));
    if (call.uncertain)
        text += "; uncertain: the table's rounding allows a change beyond the threshold, counted as flat";
    return text;
}

}  // namespace

VerdictResult classify(const VerdictInput& in) {
    VerdictResult result;
    const auto allocated = judge_change(in.allocated_before, in.allocated_delta);
    const auto reserved = judge_change(in.reserved_before, in.reserved_delta);
    result.evidence.push_back(describe("allocated (allocated_bytes.all.current)", in.allocated_before,
                                       in.allocated_delta, allocated));
    result.evidence.push_back(describe("reserved (reserved_bytes.all.current)", in.reserved_before,
                                       in.reserved_delta, reserved));
    std::optional<ChangeCall> inactive;
    if (in.inactive_split_before && in.inactive_split_delta) {
        inactive = judge_change(*in.inactive_split_before, *in.inactive_split_delta);
        result.evidence.push_back(describe("non-releasable (inactive_split_bytes.all.current)",
                                           *in.inactive_split_before, *in.inactive_split_delta, *inactive));
    }

    if (allocated.change == Change::grows) {
        result.verdict = Verdict::leak;
        result.advice = {
            "Live tensors accumulate: something keeps references across steps (most often a tensor "
            "with grad_fn kept in a list, e.g. losses.append(loss)).",
            "Store Python numbers or detached copies: loss.item(), tensor.detach().cpu().",
            "Run validation and metric code under torch.no_grad(); do not keep its outputs.",
            "Avoid backward(retain_graph=True) unless needed; keep intermediates local instead of on "
            "modules or globals.",
            "Take two memory snapshots (torch.cuda.memory._record_memory_history) a few steps apart and "
            "diff them to find the allocation sites that grow.",
        };
    } else if (reserved.change == Change::grows) {
        const bool fragmented = inactive && inactive->change == Change::grows;
        result.verdict = fragmented ? Verdict::fragmentation : Verdict::cache_growth;
        if (fragmented) {
            result.advice = {
                "Not a leak: live memory is flat while the caching allocator holds split, partly free "
                "segments it cannot reuse.",
                "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb:<N>) to reduce "
                "fragmentation.",
                "Use more uniform tensor shapes (pad or bucket batch sizes / sequence lengths).",
            };
        } else {
            result.advice = {
                "Not a leak: live memory is flat; the caching allocator keeps freed blocks for reuse, so "
                "reserved memory grows to the workload's high-water mark.",
                "torch.cuda.empty_cache() returns cached blocks to the driver (other processes see the "
                "memory again) but does not lower the peak a step needs.",
            };
            if (!inactive)
                result.evidence.push_back(
                    "non-releasable memory (inactive_split_bytes) unknown: fragmentation cannot be ruled out");
        }
    } else if (allocated.change == Change::falls || reserved.change == Change::falls) {
        result.verdict = Verdict::shrink;
        result.advice = {"Memory went down between the captures: no growth to explain."};
    } else {
        result.verdict = Verdict::stable;
        result.advice = {"Allocated and reserved memory are flat: no leak between these captures."};
    }

    if (in.ooms_delta && in.ooms_delta->low > 0) {
        result.evidence.push_back(fmt::format("new out-of-memory errors (num_ooms): {}",
                                              stats::format_delta(*in.ooms_delta, false)));
        if (result.verdict == Verdict::stable || result.verdict == Verdict::shrink)
            result.advice.push_back(
                "OOMs without growth: one step needs more than the card (model + activations + optimizer "
                "state) or one batch is unusually large; reduce batch size or use activation checkpointing.");
    }
    if (in.retries_delta && in.retries_delta->low > 0) {
        result.evidence.push_back(fmt::format("new cudaMalloc retries (num_alloc_retries): {}",
                                              stats::format_delta(*in.retries_delta, false)));
        result.advice.push_back(
            "cudaMalloc retries mean the allocator had to free its cache to satisfy a request: memory is "
            "close to the limit.");
    }
    return result;
}

}  // namespace memsnap::analysis
