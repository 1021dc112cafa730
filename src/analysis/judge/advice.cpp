#include <memsnap/analysis/judge/advice.hpp>

#include <fmt/format.h>

#include <stdexcept>

namespace memsnap::analysis::advice {

namespace {

// Sentences that both a diagnosis and the verdict's advice say, written once.
constexpr std::string_view kFragmentationFix =
    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb:<N>); keep batch shapes uniform "
    "(pad or bucket sequence lengths)";
constexpr std::string_view kCacheGrowthFix =
    "nothing to fix unless other processes need the memory; torch.cuda.empty_cache() returns it";

constexpr PatternText kPatterns[] = {
    {"dataset",
     "likely CUDA tensors created or cached in the dataset (Dataset.__getitem__ or a collate function): every "
     "DataLoader worker keeps its own copies",
     "do CPU-only work in the dataset and move batches to the GPU in the training loop; do not cache CUDA tensors "
     "on the dataset"},
    {"logging", "likely logging without detach: a logged tensor keeps its autograd graph alive",
     "log `tensor.detach().cpu()` or `.item()` instead of the tensor"},
    {"augmentation_cache", "likely an unbounded cache in augmentation or visualisation code holding GPU tensors",
     "store `tensor.detach()` (or a CPU copy) and bound the cache, e.g. keep the last N"},
    {"retained_tensors",
     "likely tensors allocated here are kept alive between the captures by a reference (a list, dict, attribute "
     "or global), e.g. `history.append(output)`",
     "store `.item()` or `.detach().cpu()` instead of the tensor, or bound/clear the container"},
    {"retained_graph",
     "likely a retained autograd graph: something keeps a tensor with grad_fn alive across steps: "
     "`losses.append(loss)`, stored activations or outputs, validation without torch.no_grad(), or "
     "`best = min(best, loss)`",
     "keep Python numbers or detached copies: `loss.item()`, `out.detach().cpu()`; wrap evaluation in "
     "`with torch.no_grad():`"},
    {"retained_graph_site",
     "likely part of a retained autograd graph (see the overall diagnosis): saved activations of a forward pass "
     "that is never freed",
     "keep Python numbers or detached copies: `loss.item()`, `out.detach().cpu()`; wrap evaluation in "
     "`with torch.no_grad():`"},
    {"gradient_growth",
     "gradients kept growing after they existed: likely graphs kept by backward(retain_graph=True), new "
     "requires_grad tensors created every step, or .grad accumulated without zero_grad",
     "drop retain_graph=True unless a second backward needs it; create parameters once; call "
     "optimizer.zero_grad(set_to_none=True) every step"},
    {"growing_tensor",
     "likely tensors that grow with the data (longer sequences, bigger batches, a buffer grown with torch.cat)",
     "bucket or pad shapes to a few sizes, cap the sequence length, or preallocate the buffer to its final size"},
    {"optimizer_first_step",
     "gradients and optimizer state appear at the first optimizer step; compare captures taken after warm-up",
     "nothing to fix: compare two captures taken after the first steps (e.g. steps 100 and 500)"},
    {"workspace_warmup", "cuBLAS/cuDNN workspaces are allocated on first use and then kept: warm-up, not a leak",
     "nothing to fix; CUBLAS_WORKSPACE_CONFIG bounds the cuBLAS workspace if it matters"},
    {"autocast_cache",
     "autocast's low-precision copies of the weights (at::autocast::cached_cast): they live until the autocast "
     "region exits. A mixed-precision capture holds them and an fp32 capture does not: a different workload, not "
     "a leak",
     "nothing to fix; compare captures taken at the same point of the same precision"},
    {"different_workload",
     "these captures cannot show a leak: no block can be followed from one to the other, so they are compared as "
     "two workloads, site by site",
     "to find a leak, take both captures in one run, a few hundred steps apart"},
    {"below_noise", "grew, but less than the noise floor of allocated memory", "nothing to fix from these captures"},
    {"one_time_growth",
     "a jump, then flat: memory allocated once at a later step (a cache filled, a buffer sized up, state made at "
     "its first use), not a leak",
     "nothing to fix unless the new level is too high; then look at what this line allocates once"},
    {"sawtooth",
     "memory that comes and goes: it grows and is freed again across the captures, so it is held for a while, "
     "not leaked",
     "if its peaks are too high, free it sooner (del the references, or process in smaller chunks); a capture "
     "taken at the peaks tells what holds it"},
    {"fragmentation",
     "fragmentation, not a leak: live blocks did not grow, but the allocator holds more partly used segments it "
     "cannot release",
     kFragmentationFix},
    {"cache_growth",
     "cache growth, not a leak: live memory is flat and the extra reserved memory is free blocks the caching "
     "allocator keeps for reuse",
     kCacheGrowthFix},
    // Out-of-memory events (trace and info), by classification.
    {"device_full",
     "the device was full of live tensors: neither the cache nor the device had the free memory the request needed",
     "find what holds the memory (the live sites below); then reduce the batch size or sequence length, use "
     "activation checkpointing or mixed precision, or shard the model (FSDP, ZeRO)"},
    {"fragmentation_oom",
     "fragmentation: the cache held enough free memory in all, but no free block of the request's size on its "
     "stream, and the device could not give a new segment",
     kFragmentationFix},
    {"other_process",
     "another process held memory on this device: this process's cache and the free memory together are far "
     "below the device's capacity",
     "check nvidia-smi for other processes on this GPU; give each process its own GPU (CUDA_VISIBLE_DEVICES)"},
    {"single_huge_request", "one request larger than the device could give even with every cached block returned",
     "look for a tensor far bigger than intended at the failing line (a shape bug, an accidental broadcast or "
     "outer product), or a batch or sequence too large for this GPU"},
};

}  // namespace

const PatternText& pattern(std::string_view id) {
    for (const auto& p : kPatterns)
        if (p.id == id) return p;
    throw std::out_of_range(fmt::format("no diagnosis pattern '{}'", id));
}

std::vector<std::string> for_verdict(Verdict verdict, const Context& context) {
    std::vector<std::string> out;
    switch (verdict) {
        case Verdict::leak:
            if (context.from_snapshots) {
                out = {
                    "Blocks allocated between the captures are still live in the second: something keeps them. "
                    "The sites below say where they were allocated; a snapshot does not record who holds them.",
                    "Look for references kept across steps in the code of the leading sites and their callers: "
                    "lists, dicts, attributes, globals, caches.",
                    "Keep Python numbers or detached copies (`loss.item()`, `tensor.detach().cpu()`), run "
                    "evaluation under `torch.no_grad()`, and avoid `backward(retain_graph=True)` unless needed."};
            } else {
                out = {"Live memory grows between the captures: something keeps tensors alive across steps.",
                       "Summaries cannot say where: take two snapshots at these steps "
                       "(torch.cuda.memory._record_memory_history(), then torch.cuda.memory._dump_snapshot()) "
                       "and diff them with memsnap to find the sites whose blocks stay."};
            }
            break;
        case Verdict::one_time_growth:
            out = {
                "Not a leak: memory that appears once and then stays flat (gradients at the first backward, "
                "optimizer state at the first step, library workspaces, autocast's weight copies).",
                "Compare two captures taken after warm-up, e.g. at steps 100 and 500."};
            break;
        case Verdict::shape_growth:
            out = {"As many live blocks as before, or fewer, hold more bytes: tensors got bigger, not more numerous.",
                   "Bucket or pad shapes to a few sizes, cap sequence lengths, or preallocate buffers to their "
                   "final size."};
            break;
        case Verdict::growth:
            out = {fmt::format(
                       "Allocated memory grows, but {}: it cannot be told from here whether it is a leak.",
                       context.growth_reason.empty() ? "these captures cannot show a leak" : context.growth_reason),
                   "To find a leak, take both captures in one run, a few hundred steps apart."};
            break;
        case Verdict::fragmentation:
            out = {
                "Not a leak: live memory is flat while the caching allocator holds split, partly free segments "
                "it cannot reuse.",
                fmt::format("Fix: {}.", kFragmentationFix)};
            break;
        case Verdict::cache_growth:
            out = {
                "Not a leak: live memory is flat; the caching allocator keeps freed blocks for reuse, so reserved "
                "memory grows to the workload's high-water mark.",
                fmt::format("Fix: {}; it does not lower the peak a step needs.", kCacheGrowthFix)};
            break;
        case Verdict::shrink:
            out = {"Memory went down between the captures: no growth to explain."};
            break;
        case Verdict::stable:
            out = {"Allocated and reserved memory are flat: no leak between these captures."};
            break;
    }
    if (context.new_ooms && (verdict == Verdict::stable || verdict == Verdict::shrink))
        out.push_back(
            "OOMs without growth: one step needs more than the card (model + activations + optimizer state) or one "
            "batch is unusually large; reduce batch size or use activation checkpointing.");
    if (context.new_retries)
        out.push_back(
            "cudaMalloc retries mean the allocator had to free its cache to satisfy a request: memory is close to the "
            "limit.");
    return out;
}

}  // namespace memsnap::analysis::advice
