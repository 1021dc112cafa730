#include "phrases.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

namespace memsnap::report::doc {

using analysis::Advice;
using analysis::Fact;
using analysis::FactKind;
using analysis::FactValue;
using analysis::Pattern;

namespace {

// Sentences that a diagnosis and a verdict's advice both say, written once.
constexpr std::string_view kFragmentationFix =
    "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or max_split_size_mb:<N>); keep batch shapes uniform "
    "(pad or bucket sequence lengths)";
constexpr std::string_view kCacheGrowthFix =
    "nothing to fix unless other processes need the memory; torch.cuda.empty_cache() returns it";

struct PatternText {
    Pattern pattern;
    std::string_view summary, fix;
};

// The fixed words of each diagnosis pattern (docs/leak-patterns.md).
constexpr PatternText kPatterns[] = {
    {Pattern::dataset,
     "likely CUDA tensors created or cached in the dataset (Dataset.__getitem__ or a collate function): every "
     "DataLoader worker keeps its own copies",
     "do CPU-only work in the dataset and move batches to the GPU in the training loop; do not cache CUDA tensors "
     "on the dataset"},
    {Pattern::logging, "likely logging without detach: a logged tensor keeps its autograd graph alive",
     "log `tensor.detach().cpu()` or `.item()` instead of the tensor"},
    {Pattern::augmentation_cache, "likely an unbounded cache in augmentation or visualisation code holding GPU tensors",
     "store `tensor.detach()` (or a CPU copy) and bound the cache, e.g. keep the last N"},
    {Pattern::retained_tensors,
     "likely tensors allocated here are kept alive between the captures by a reference (a list, dict, attribute "
     "or global), e.g. `history.append(output)`",
     "store `.item()` or `.detach().cpu()` instead of the tensor, or bound/clear the container"},
    {Pattern::retained_graph,
     "likely a retained autograd graph: something keeps a tensor with grad_fn alive across steps: "
     "`losses.append(loss)`, stored activations or outputs, validation without torch.no_grad(), or "
     "`best = min(best, loss)`",
     "keep Python numbers or detached copies: `loss.item()`, `out.detach().cpu()`; wrap evaluation in "
     "`with torch.no_grad():`"},
    {Pattern::retained_graph_site,
     "likely part of a retained autograd graph (see the overall diagnosis): saved activations of a forward pass "
     "that is never freed",
     "keep Python numbers or detached copies: `loss.item()`, `out.detach().cpu()`; wrap evaluation in "
     "`with torch.no_grad():`"},
    {Pattern::gradient_growth,
     "gradients kept growing after they existed: likely graphs kept by backward(retain_graph=True) or "
     "create_graph=True, new requires_grad tensors made every step, or torch.autograd.grad outputs kept",
     "drop retain_graph=True and create_graph=True unless a second backward needs them; create parameters once; "
     "keep .item() of what autograd.grad returns"},
    {Pattern::growing_tensor,
     "likely tensors that grow with the data (longer sequences, bigger batches, a buffer grown with torch.cat)",
     "bucket or pad shapes to a few sizes, cap the sequence length, or preallocate the buffer to its final size"},
    {Pattern::optimizer_first_step,
     "gradients and optimizer state appear at the first optimizer step; compare captures taken after warm-up",
     "nothing to fix: compare two captures taken after the first steps (e.g. steps 100 and 500)"},
    {Pattern::workspace_warmup, "cuBLAS/cuDNN workspaces are allocated on first use and then kept: warm-up, not a leak",
     "nothing to fix; CUBLAS_WORKSPACE_CONFIG bounds the cuBLAS workspace if it matters"},
    {Pattern::autocast_cache,
     "autocast's low-precision copies of the weights (at::autocast::cached_cast): they live until the autocast "
     "region exits",
     "nothing to fix; compare captures taken at the same point of the same precision"},
    {Pattern::one_time_growth,
     "a jump, then flat: memory allocated once at a later step (a cache filled, a buffer sized up, state made at "
     "its first use), not a leak",
     "nothing to fix unless the new level is too high; then look at what this line allocates once"},
    {Pattern::sawtooth,
     "memory that comes and goes: it grows and is freed again across the captures, so it is held for a while, "
     "not leaked",
     "if its peaks are too high, free it sooner (del the references, or process in smaller chunks); a capture "
     "taken at the peaks tells what holds it"},
    {Pattern::fragmentation,
     "fragmentation, not a leak: live blocks did not grow, but the allocator holds more partly used segments it "
     "cannot release",
     kFragmentationFix},
    {Pattern::cache_growth,
     "cache growth, not a leak: live memory is flat and the extra reserved memory is free cache that "
     "empty_cache can release",
     kCacheGrowthFix},
    {Pattern::device_full,
     "the device was full of live tensors: neither the cache nor the device had the free memory the request needed",
     // An OOM's own fix names what held it (device_full_fix); this is what a diagnosis without
     // that moment says.
     "find what holds the memory (the live sites and categories below) and shrink the largest: smaller batches, "
     "activation checkpointing or mixed precision for activations; sharding (FSDP, ZeRO) for parameters, "
     "gradients and optimizer state"},
    {Pattern::fragmentation_oom,
     "fragmentation: the cache held enough free memory in all, but no free block of the request's size on its "
     "stream, and the device could not give a new segment",
     kFragmentationFix},
    {Pattern::other_process,
     "another process held memory on this device: this process's cache and the free memory together are far "
     "below the device's capacity",
     "check nvidia-smi for other processes on this GPU; give each process its own GPU (CUDA_VISIBLE_DEVICES)"},
    {Pattern::single_huge_request,
     "one request larger than the device could give even with every cached block returned",
     "look for a tensor far bigger than intended at the failing line (a shape bug, an accidental broadcast or "
     "outer product), or a batch or sequence too large for this GPU"},
};

const PatternText& text_of(Pattern p) {
    for (const auto& t : kPatterns)
        if (t.pattern == p) return t;
    return kPatterns[0];  // every pattern has a row (a test checks it)
}

std::string value_text(const FactValue& v) {
    using U = FactValue::Unit;
    switch (v.unit) {
        case U::bytes:
            return util::human_bytes(v.integer);
        case U::count:
            return fmt::format("{}", v.integer);
        case U::real:
            return fmt::format("{}", v.real);
        case U::text:
            return v.text;
        case U::flag:
            return v.integer ? "yes" : "no";
        case U::bytes_range:
            return util::format_range({v.integer, v.high}, true);
        case U::count_range:
            return util::format_range({v.integer, v.high}, false);
    }
    return "";
}

// A named value of the fact as people read it.
std::string v(const Fact& f, std::string_view name) {
    const auto* value = f.find(name);
    return value ? value_text(*value) : std::string();
}

// A range's change, signed.
std::string delta(const Fact& f, std::string_view name) {
    const auto* value = f.find(name);
    if (!value) return "";
    return util::format_delta({value->integer, value->high}, value->unit == FactValue::Unit::bytes_range);
}

std::string rate(const Fact& f) { return util::rate(f.fraction("rate"), f.is("per_step")); }

// "device 1 " before a figure that is one device's of several.
std::string on_device(const Fact& f) { return f.has("device") ? fmt::format("device {} ", f.integer("device")) : ""; }

std::string_view metric_label(std::string_view metric) {
    if (metric == "allocated_bytes") return "allocated (allocated_bytes.all.current)";
    if (metric == "reserved_bytes") return "reserved (reserved_bytes.all.current)";
    // Summaries give inactive_split_bytes; snapshots their own figure, where the free pages of
    // expandable segments count as releasable.
    if (metric == "non_releasable_bytes") return "non-releasable cache";
    return metric;
}

std::string plural(std::int64_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

std::string growth_reason(const Fact& f) {
    const auto& r = f.word("reason");
    if (r == "order_unknown")
        return "the order of the captures is not known (no steps, or captures that contradict the order given): "
               "levels are compared, behaviour is not judged";
    if (r == "other_process")
        return "the captures come from different processes: levels are compared, no behaviour "
               "is judged";
    if (r == "different_workload")
        return "the captures hold different workloads (other sites): levels are compared, no behaviour is judged";
    if (r == "unknown_process")
        return "neither one process nor the same workload can be shown: levels are compared, no behaviour is judged";
    if (r == "no_stack") return "the growth is in blocks without a stack: it cannot be placed at a site";
    if (r == "small_part")
        return "its new blocks stay, but they are under the noise floor and under 2% of the growth that stays: too "
               "small to tell from allocator noise";
    if (r == "shape_dominates")
        return "more bytes in as many blocks (shape growth) explain as much of the growth or more: these new blocks "
               "may come with the larger shapes";
    if (r == "allocated_unknown")
        return "allocated memory is not in both tables: reserved growth could be cache or live tensors";
    return "below the noise floor of allocated memory with every such site together";
}

std::string comparison_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::traces_share_events:
            if (f.is("same_trace"))
                return fmt::format(
                    "the traces are the same, all {} events from first to last{}: one moment of one process, taken "
                    "twice or copied; nothing ran between them",
                    f.integer("events"),
                    f.is("sampled") ? " (of those sampled, one in 64, with the same ends and counts)"
                                    : " (time, address, size, action)");
            if (f.is("sampled"))
                return fmt::format(
                    "the traces share {} of the events sampled from both (one in 64, by time, address, size and "
                    "action): one process",
                    f.integer("events"));
            return fmt::format("the traces share {} events (time, address, size, action): one process",
                               f.integer("events"));
        case FactKind::traces_overlap_apart:
            return fmt::format(
                "the traces overlap in time but share none of the {} events both cover: two processes recording "
                "at once",
                f.integer("events"));
        case FactKind::trace_order_reversed:
            return fmt::format(
                "the second capture's trace ends {:.3f} s before the first's begins: the order given is not "
                "the order of one run (if they are one run, swap them)",
                static_cast<double>(f.integer("gap_us")) / 1e6);
        case FactKind::traces_apart:
            return f.is("full") ? "the traces share no event: a ring buffer was full, so older events may be gone"
                                : "the traces share no event and neither ring buffer is full: recording was restarted, "
                                  "or this is another run";
        case FactKind::blocks_survive:
            return fmt::format(
                "{} live blocks are at the same address with the same size and stack: this fits one process, and a "
                "fresh run of the same script too",
                f.integer("blocks"));
        case FactKind::segments_survive:
            return fmt::format("{} segments are at the same address in both: fits one process, proves nothing",
                               f.integer("segments"));
        case FactKind::nothing_shared:
            return fmt::format("no live block and no segment is at the same address in both ({} and {} live blocks)",
                               f.integer("before"), f.integer("after"));
        case FactKind::devices_differ:
            return fmt::format("the captures hold different devices ({} before, {} after)", v(f, "before"),
                               v(f, "after"));
        case FactKind::roots_differ:
            return fmt::format("user code lives under {} before and {} after: another checkout or machine",
                               v(f, "before"), v(f, "after"));
        case FactKind::main_scripts_differ:
            return fmt::format("the processes ran different main scripts ({} before, {} after): two processes",
                               v(f, "before"), v(f, "after"));
        case FactKind::setting_differs:
            return fmt::format("allocator setting {} differs ({} before, {} after)", v(f, "name"), v(f, "before"),
                               v(f, "after"));
        case FactKind::versions_differ:
            return fmt::format("the tables are laid out by different torch versions ({} before, {} after)",
                               v(f, "before"), v(f, "after"));
        case FactKind::counter_falls:
            return fmt::format(
                "the cumulative counter {} falls ({} → {}): the order given is not the order of one run (the files "
                "in reverse order, another process, or a reset)",
                v(f, "metric"), v(f, "before"), v(f, "after"));
        case FactKind::counters_grow:
            return "cumulative counters grow: fits one process, proves nothing";
        case FactKind::no_process_evidence:
            return "nothing in the captures shows or rules out one process";
        case FactKind::same_sites:
            return fmt::format(
                "the same sites hold the memory of both captures ({} sites, {}% of the second one's "
                "bytes with a stack)",
                f.integer("sites"), util::percent(f.fraction("share")));
        case FactKind::sites_one_side:
            return fmt::format(
                "{} hold {} ({}% of the bytes with a stack) in the {} capture and nothing in the {}, "
                "e.g. {}: another workload",
                plural(f.integer("sites"), "site"), v(f, "bytes"), util::percent(f.fraction("share")),
                f.word("side") == "after" ? "second" : "first", f.word("side") == "after" ? "first" : "second",
                v(f, "example"));
        case FactKind::no_stacks_to_compare:
            if (f.integer("allocated_before") == 0 || f.integer("allocated_after") == 0)
                return fmt::format("the {} capture holds no live memory: the workloads cannot be compared",
                                   f.integer("allocated_before") == 0 ? "first" : "second");
            return fmt::format(
                "most of a capture's live memory has no stack ({}% before, {}% after carry one): the workloads "
                "cannot be compared",
                util::percent(f.fraction("stacked_before")), util::percent(f.fraction("stacked_after")));
        case FactKind::one_log:
            return "the tables come from one log, in order: one workload";
        case FactKind::summaries_no_sites:
            return "summary tables name no sites: the workloads cannot be compared (unless the tables come from one "
                   "log)";
        case FactKind::workload_one_process:
            return "one process is shown, so the workload needs no showing (its sites may come and go)";
        default:
            return "";
    }
}

std::string totals_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::metric_change: {
            std::string text =
                fmt::format("{}{}: {} → change {} ({}; noise floor {})", on_device(f), metric_label(f.word("metric")),
                            v(f, "before"), delta(f, "delta"), f.word("change"), v(f, "threshold"));
            if (f.is("uncertain"))
                text += "; uncertain: the table's rounding allows a change beyond the floor, counted as flat";
            return text;
        }
        case FactKind::metric_missing:
            return fmt::format("{}: not in both captures", metric_label(f.word("metric")));
        case FactKind::non_releasable_unknown:
            return "non-releasable memory (inactive_split_bytes.all.current) unknown: fragmentation cannot be told "
                   "from cache growth";
        case FactKind::live_blocks_change:
            return fmt::format("{}live allocations: {} → change {}", on_device(f), v(f, "before"), delta(f, "delta"));
        case FactKind::new_ooms:
            return fmt::format("new out-of-memory errors (num_ooms): {}", delta(f, "delta"));
        case FactKind::new_retries:
            return fmt::format("new cudaMalloc retries (num_alloc_retries): {}", delta(f, "delta"));
        case FactKind::reserved_split:
            return fmt::format(
                "of the change in cached memory (reserved less allocated), {} is releasable (whole free "
                "segments, free pages of expandable segments) and {} is not",
                delta(f, "releasable"), delta(f, "non_releasable"));
        case FactKind::peak_rose:
            return fmt::format(
                "the peak of allocated memory (allocated_bytes.all.peak) rose from {} to {} ({}): the allocator "
                "reserved for a higher peak, and keeps it as cache",
                v(f, "before"), v(f, "after"), delta(f, "delta"));
        case FactKind::device_verdict:
            return fmt::format("device {}: {} (allocated {}, change {}, noise floor {})", f.integer("device"),
                               f.word("verdict"), util::human_bytes(f.integer("allocated_before")),
                               util::signed_bytes(f.integer("allocated_delta")),
                               util::human_bytes(f.integer("threshold")));
        case FactKind::sites_stay:
            return fmt::format(
                "{} gained blocks that {}: {} blocks, {}, {} the noise floor of {}", plural(f.integer("sites"), "site"),
                f.is("one_process") ? "stay" : "are new in the second capture", util::signed_count(f.integer("blocks")),
                util::signed_bytes(f.integer("bytes")), f.is("above") ? "above" : "within", v(f, "threshold"));
        case FactKind::sites_first_appear:
            return fmt::format(
                "gradients, optimizer state, workspaces or autocast weight copies that were not there before: {}",
                util::signed_bytes(f.integer("bytes")));
        case FactKind::sites_shape:
            return fmt::format("sites with as many blocks or fewer holding more bytes: {}",
                               util::signed_bytes(f.integer("bytes")));
        default:
            return "";
    }
}

std::string counts(const Fact& f) {
    return fmt::format("{} blocks ({} new, {} gone): {} → {} blocks, {} ({})",
                       util::signed_count(f.integer("delta_blocks")), f.integer("new"), f.integer("gone"),
                       f.integer("before"), f.integer("after"), util::signed_bytes(f.integer("delta_bytes")), rate(f));
}

std::string site_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::site_counts:
            return counts(f);
        case FactKind::site_appears:
            return fmt::format("{} blocks of {} appear, none were there before: {}", f.integer("new"),
                               f.word("category"), counts(f));
        case FactKind::site_same_blocks:
            return fmt::format("the same {} blocks before and after hold {} more ({})", f.integer("blocks"),
                               util::human_bytes(f.integer("delta_bytes")), rate(f));
        case FactKind::site_fewer_blocks:
            return fmt::format("fewer blocks ({} → {}) hold {} more ({})", f.integer("before"), f.integer("after"),
                               util::human_bytes(f.integer("delta_bytes")), rate(f));
        case FactKind::blocks_per_step:
            return fmt::format("{} new live blocks per step", util::count_rate(f.fraction("rate")));
        case FactKind::passes_user_code:
            return fmt::format("the growing stack passes through user code {}", v(f, "frame"));
        case FactKind::forward_sites_alike:
            return fmt::format("{} forward-pass sites each gained {} blocks: {} blocks and {} in all",
                               f.integer("sites"), f.integer("blocks_each"), f.integer("blocks"),
                               util::signed_bytes(f.integer("bytes")));
        case FactKind::forward_sites_rate:
            return fmt::format("{} blocks per {}, {}, over these sites", util::count_rate(f.fraction("blocks")),
                               f.is("per_step") ? "step" : "capture",
                               util::rate(f.fraction("bytes"), f.is("per_step")));
        case FactKind::converges_in:
            return fmt::format("the growth converges in {} ({}% of it)", v(f, "frame"),
                               util::percent(f.fraction("share")));
        case FactKind::one_interval:
            return fmt::format("{} → {}, four fifths or more of it in one interval", v(f, "first"), v(f, "last"));
        case FactKind::up_and_down:
            return fmt::format("it went up and down across the captures ({}% of intervals not down)",
                               util::percent(f.fraction("not_down")));
        case FactKind::growth_reason:
            return growth_reason(f);
        case FactKind::site_without_stack:
            return "these blocks carry no allocation stack (made before recording started, or recorded without "
                   "stacks): no cause can be named; they are grouped by block size";
        default:
            return "";
    }
}

std::string series_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::order_given:
            return "the files are in the order given, not an order of steps: give --steps, or name the files with a "
                   "step word, to judge behaviour over time";
        case FactKind::steps_unknown:
            return fmt::format("steps unknown ({}): growth is given per capture; give --steps for per step",
                               f.word("source"));
        case FactKind::too_few_points:
            return fmt::format(
                "{} points after warm-up: a leak needs {} or more, or 3 where every site that carries "
                "the growth agrees",
                f.integer("points"), f.integer("needed"));
        case FactKind::warmup_left_out:
            return fmt::format("the first {} interval(s) (warm-up) are left out of the fit", f.integer("intervals"));
        case FactKind::series_fit:
            if (!f.is("ordered"))
                return fmt::format("{}: between {} and {} across the captures, in no known order: {}", v(f, "name"),
                                   v(f, "lowest"), v(f, "highest"), v(f, "verdict"));
            // Compared as levels, a rate per step would read as the program's behaviour: the change.
            if (!f.is("shape_judged"))
                return fmt::format(
                    "{}: {} → {} ({}), compared as levels (no rate, and how steady it looks is not judged, "
                    "between these captures): {}",
                    v(f, "name"), v(f, "first"), v(f, "last"),
                    util::signed_bytes(f.integer("last") - f.integer("first")), v(f, "verdict"));
            return fmt::format(
                "{}: {} → {}, {} by least squares ({}): {}", v(f, "name"), v(f, "first"), v(f, "last"),
                util::rate(f.fraction("slope"), f.is("per_step")),
                f.is("r2_defined") ? fmt::format("R² {:.2f}", f.fraction("r2")) : std::string("no R²: nothing moved"),
                v(f, "verdict"));
        case FactKind::site_steady:
            return fmt::format("{} grows {} steadily (R² {:.2f}, {}% of intervals not down)", v(f, "site"),
                               util::rate(f.fraction("slope"), f.is("per_step")), f.fraction("r2"),
                               util::percent(f.fraction("not_down")));
        case FactKind::sites_agree:
            return fmt::format("every site that carries the growth agrees ({})", plural(f.integer("sites"), "site"));
        case FactKind::sites_disagree:
            return fmt::format("the sites that carry the growth say {} ({}): the totals alone are not taken for a leak",
                               v(f, "verdict"), plural(f.integer("sites"), "site"));
        case FactKind::jump_then_steady:
            return fmt::format("after the jump at {} {}, allocated memory grows steadily: --warmup {} fits from there",
                               f.is("per_step") ? "step" : "capture", f.integer("at"), f.integer("warmup"));
        case FactKind::summary_midpoints:
            return f.is("fitted") ? "summary values are truncated to their printed unit (each is a range one unit "
                                    "wide); the fit uses the middle of each range"
                                  : "summary values are truncated to their printed unit (each is a range one unit "
                                    "wide)";
        case FactKind::ranks_from_order:
            return "the file names carry no rank (rank3, rank_3, -r3): ranks are numbered in the order given";
        case FactKind::ranks_within_noise:
            return fmt::format("every rank is within {} of the median rank's allocated memory", v(f, "noise"));
        case FactKind::roots_several:
            return fmt::format("the captures come from {} checkouts ({}): not one run, compared as levels",
                               f.integer("roots"), v(f, "list"));
        case FactKind::devices_as_ranks:
            return fmt::format(
                "one capture of {} devices: its devices are compared as ranks, as replicas would be (DataParallel); "
                "whether they are replicas is the same-workload answer",
                f.integer("devices"));
        case FactKind::devices_hold_parts:
            return fmt::format(
                "the {} {} do not hold the same sites (different parts of a model, as with device_map or pipeline "
                "stages, or different programs): their levels are compared, none is called an outlier",
                f.integer("devices"), v(f, "kind"));
        case FactKind::same_capture:
            if (f.has("times"))
                return fmt::format("{} is given {} times: it is compared with itself", v(f, "file"),
                                   f.integer("times"));
            return fmt::format("{} is given as both BEFORE and AFTER: it is compared with itself", v(f, "file"));
        case FactKind::rank_ooms: {
            // Its snapshot comes after the failure: what it holds then is not what filled it.
            const bool device = f.integer("device") >= 0;
            const auto who = device ? fmt::format("rank {} (device {})", f.integer("rank"), f.integer("device"))
                                    : fmt::format("rank {}", f.integer("rank"));
            const auto shows =
                device ? fmt::format("memsnap trace --device {}", f.integer("device")) : std::string("memsnap trace");
            if (f.has("held"))
                return fmt::format(
                    "{} ran out of memory: {} out-of-memory event(s) in the trace, holding {} allocated at the "
                    "last; its snapshot was taken after, so its levels in the table are what the error left ({} "
                    "shows that moment)",
                    who, f.integer("ooms"), v(f, "held"), shows);
            return fmt::format(
                "{} ran out of memory: {} out-of-memory event(s) in the trace; its snapshot was taken after, so "
                "its levels here are not what filled it ({} shows that moment)",
                who, f.integer("ooms"), shows);
        }
        case FactKind::step_differs:
            return fmt::format("the captures are of different steps ({}): ranks are compared at one step",
                               v(f, "steps"));
        case FactKind::device_per_rank:
            return fmt::format("{} holds devices {}: give --device N to compare one device per rank", v(f, "file"),
                               v(f, "devices"));
        default:
            return "";
    }
}

std::string note_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::not_comparable:
            return fmt::format(
                "same process: {}, same workload: {}: compared as levels{}; no leak, fragmentation or "
                "one-time growth is judged",
                v(f, "same_process"), v(f, "same_workload"),
                f.is("summaries") ? "" : " (sites matched by their frames, not blocks by address)");
        case FactKind::caveat_same_workload:
            if (f.is("summaries"))
                return "one process is not shown (summaries hold no trace events); behaviour is judged because the "
                       "tables come from one log, in order: if they are separate runs, read the verdicts as levels";
            return "one process is not shown (no shared trace events); behaviour is judged because the same sites "
                   "hold the memory of both captures: if they are separate runs, read the verdicts as levels";
        case FactKind::stacks_before_recording:
            return fmt::format(
                "the live blocks were allocated before recording started (the traces hold {} events with a stack): "
                "blocks are grouped by size alone; start _record_memory_history() before the model is built to see "
                "their sites",
                f.integer("trace_stacks"));
        case FactKind::no_stacks_recorded:
            return "no allocation stacks were recorded: blocks are grouped by size alone (record with "
                   "torch.cuda.memory._record_memory_history() to see sites)";
        case FactKind::stacks_one_side:
            return fmt::format(
                "the {} capture's live blocks carry no allocation stack ({}): its memory has no sites and no "
                "categories but unknown, so the site and category changes set the other capture's sites against "
                "unattributed memory and say nothing of how those sites changed",
                v(f, "side"),
                f.integer("trace_stacks") > 0
                    ? fmt::format("they were made before recording started, as its trace holds {} events with a "
                                  "stack: start _record_memory_history() before the model is built",
                                  f.integer("trace_stacks"))
                    : std::string("it records none: record with _record_memory_history()"));
        case FactKind::stacks_some_captures:
            return fmt::format(
                "{} of the {} captures hold no live block with an allocation stack ({}; made before recording "
                "started, or recorded without stacks): their memory has no sites and no "
                "categories but unknown, so the site and category trends set the others' sites against "
                "unattributed memory and say nothing of how those sites changed",
                f.integer("captures"), f.integer("of"), v(f, "files"));
        case FactKind::focus_filter:
            return "--focus keeps only matching stacks: sites do not add up to the totals";
        case FactKind::pending_free:
            return fmt::format(
                "blocks pending free (freed, still in use on another stream) are counted apart: {} "
                "before, {} after",
                v(f, "before"), v(f, "after"));
        case FactKind::shares_unknown:
            if (f.integer("delta") < 0)
                return fmt::format("allocated memory fell by {}: no share of growth is given",
                                   util::human_bytes(-f.integer("delta")));
            return fmt::format(
                "allocated memory changed by {}, not past its noise floor of {}: no share of the "
                "growth is given",
                util::signed_bytes(f.integer("delta")), v(f, "threshold"));
        case FactKind::oom_elsewhere:
            return fmt::format("{} on device {} (not shown here: --device {} shows it)",
                               plural(f.integer("events"), "out-of-memory event"), f.integer("device"),
                               f.integer("device"));
        case FactKind::oom_in_capture:
            return fmt::format("the {} capture records {} on device {}", v(f, "side") == "before" ? "first" : "second",
                               plural(f.integer("events"), "out-of-memory event"), f.integer("device"));
        case FactKind::peak_higher:
            if (f.integer("device") != f.integer("other_device"))
                return fmt::format(
                    "the {} capture's trace peaks higher: {} on device {} against {} on device {} "
                    "({}; the peaks are of different devices)",
                    v(f, "side"), v(f, "bytes"), f.integer("device"), v(f, "other"), f.integer("other_device"),
                    util::signed_bytes(f.integer("delta")));
            return fmt::format("the {} capture's trace peaks higher: {} against {} ({})", v(f, "side"), v(f, "bytes"),
                               v(f, "other"), util::signed_bytes(f.integer("delta")));
        default:
            return "";
    }
}

// Notes on which tables, metrics and devices were compared, and on gates.
std::string table_note_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::one_table:
            return "only one table for this device: before and after are the same table";
        case FactKind::series_listed:
            return fmt::format(
                "a series of {} tables: {} evenly spaced points are listed, first and last included; "
                "directions and slopes use all of them",
                f.integer("tables"), f.integer("listed"));
        case FactKind::metrics_one_sided:
            return fmt::format("{} metric(s) only in the first table and {} only in the last are not compared",
                               f.integer("before_only"), f.integer("after_only"));
        case FactKind::metrics_missing:
            return fmt::format("not in both tables, so not judged: {}", v(f, "list"));
        case FactKind::devices_paired:
            return fmt::format("compared {} (before) with {} (after): the only device on each side", v(f, "before"),
                               v(f, "after"));
        case FactKind::device_one_side:
            return fmt::format("{} appears only {}; not compared", v(f, "device"),
                               f.word("side") == "before" ? "in before" : "in after");
        case FactKind::gate_growth:
            return fmt::format(
                "{}{} grows {}, over the limit of {}/{}: growth, which is not a leak verdict", v(f, "what"),
                f.has("device") ? fmt::format(" on device {}", f.integer("device")) : "",
                f.word("unit") == "iteration"
                    ? fmt::format("{}/iteration", util::signed_bytes(static_cast<std::int64_t>(f.fraction("rate"))))
                    : util::rate(f.fraction("rate"), f.is("per_step")),
                v(f, "limit"), f.word("unit"));
        case FactKind::gate_not_judged: {
            if (f.is("growth"))
                return f.word("why") == "order_unknown"
                           ? "no slope is fitted to captures in no known order: the gate is not judged, and does not "
                             "trip"
                           : "no growth per iteration can be measured (the trace holds fewer than 2 iterations): the "
                             "gate is not judged, and does not trip";
            const auto& w = f.word("why");
            const char* why = w == "order_unknown"        ? "the order of the captures is not known"
                              : w == "other_process"      ? "the captures come from different processes"
                              : w == "different_workload" ? "the captures hold different workloads"
                              : w == "too_few_iterations" ? "the trace holds fewer than 3 whole iterations"
                                                          : "neither one process nor the same workload can be shown";
            return fmt::format("no leak verdict can be given ({}): the gate is not judged, and does not trip", why);
        }
        case FactKind::file_skipped:
            return fmt::format("skipped {}: {}", v(f, "file"), v(f, "reason"));
        case FactKind::reader_warning:
            return v(f, "file").empty() ? v(f, "text") : v(f, "file") + ": " + v(f, "text");
        default:
            return "";
    }
}

// Why an allocation ran out of memory.
std::string oom_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::oom_request:
            return fmt::format(
                "requested {}; the device had {} free; this process held {} allocated and {} reserved, "
                "so {} free in its cache",
                v(f, "requested"), v(f, "device_free"), v(f, "allocated"), v(f, "reserved"), v(f, "cache_free"));
        case FactKind::oom_largest_free:
            return fmt::format("the largest free block in the cache was {} ({} on the request's stream {})",
                               v(f, "largest"), v(f, "largest_same_stream"), f.integer("stream"));
        case FactKind::oom_capacity:
            return fmt::format("the device holds {} (--device-memory): {} was neither in this process's cache nor free",
                               v(f, "capacity"), v(f, "other"));
        case FactKind::oom_capacity_too_small:
            return fmt::format(
                "--device-memory {} is less than this process's reserved memory and the free memory together ({}): "
                "it cannot be the device's capacity, and is not used",
                v(f, "capacity"), v(f, "held"));
        case FactKind::oom_levels_impossible:
            return fmt::format(
                "these levels are impossible ({} allocated, {} reserved): counted back from the snapshot, they show "
                "that the trace does not match it, so neither they nor the classification can be trusted",
                v(f, "allocated"), v(f, "reserved"));
        case FactKind::oom_capacity_unknown:
            return "whether another process held memory on the device cannot be told without its capacity "
                   "(--device-memory)";
        case FactKind::oom_larger_than_held:
            return fmt::format(
                "the request is larger than this process's cache and the free memory together ({}); "
                "another process holding memory would look the same: give --device-memory to tell",
                v(f, "held"));
        case FactKind::oom_leak_site:
            return fmt::format(
                "{} keeps {} ({}) every iteration and held {} in {} at that moment: a leak (see the "
                "live sites)",
                v(f, "site"), plural(f.integer("allocations"), "allocation"), v(f, "bytes"), v(f, "held"),
                plural(f.integer("held_allocations"), "allocation"));
        case FactKind::ooms_more:
            return fmt::format("{} out-of-memory events; the first {} are explained", f.integer("total"),
                               f.integer("explained"));
        default:
            return "";
    }
}

// What a replay of the trace found about the trace itself: gaps, wraps, disagreements, loops.
std::string replay_phrase(const Fact& f) {
    switch (f.kind) {
        case FactKind::frees_unseen:
            return fmt::format("{} frees of blocks the trace never saw allocated", f.integer("frees"));
        case FactKind::entries_full:
            return fmt::format("the trace holds {} entries, its max_entries: older entries were overwritten",
                               f.integer("entries"));
        case FactKind::lost_history:
            return fmt::format(
                "{} live blocks ({}) carry a stack but have no alloc event in the trace: history was on "
                "when they were made, and the trace no longer holds their events (the ring buffer wrapped, or "
                "recording was restarted)",
                f.integer("blocks"), v(f, "bytes"));
        case FactKind::trace_not_recorded:
            return "the trace holds no alloc events (recorded state only): nothing can be replayed";
        case FactKind::recording_started_late:
            return fmt::format(
                "recording started after some blocks were made: the trace frees {} blocks it never saw "
                "allocated, and every live block with a stack has its alloc event",
                f.integer("frees"));
        case FactKind::recording_started_late_live:
            return fmt::format(
                "recording started after some blocks were made: {} live blocks have neither an alloc event nor a "
                "stack, while every alloc the trace holds has one",
                f.integer("blocks"));
        case FactKind::start_unseen:
            return fmt::format(
                "the trace frees {} blocks it never saw allocated, made before its first entry: recording started "
                "after they were made, or the ring buffer dropped older entries. Which cannot be told: each free "
                "carries the stack where it was freed (context=\"all\"), not where its block was made",
                f.integer("frees"));
        case FactKind::replay_disagrees:
            return fmt::format("{}: the replay gives {}, the snapshot {}", v(f, "what"), v(f, "replayed"),
                               v(f, "snapshot"));
        case FactKind::live_not_in_snapshot:
            return fmt::format(
                "{} allocation(s) the trace leaves live are not active blocks of the snapshot at that "
                "address and size",
                f.integer("allocations"));
        case FactKind::negative_start:
            return "counted back from the snapshot, memory before the first entry would be negative: the trace does "
                   "not match the snapshot's blocks and segments";
        case FactKind::larger_blocks:
            return fmt::format(
                "{} allocations live at the end hold blocks larger than they asked for ({} more in all: the allocator "
                "did not split them); the trace gives only what each allocation asked for, so an allocation freed "
                "within it counts as its request rounded up to 512 bytes, and the peak and the timeline may lie "
                "below torch's allocated bytes by such remainders",
                f.integer("allocations"), v(f, "bytes"));
        case FactKind::twice_allocated:
            return fmt::format(
                "{} address(es) allocated twice without a free in between: their frees are not in the "
                "trace",
                f.integer("addresses"));
        case FactKind::iterations_none: {
            const auto& why = f.word("why");
            if (why == "repeats_not_loop")
                return fmt::format(
                    "a sequence of allocations repeats {} times, but not as the body of a loop over most "
                    "of the trace (layers of one forward pass, a per-parameter loop, autotuning): not "
                    "taken for iterations",
                    f.integer("repeats"));
            if (why == "too_few")
                return fmt::format("{} found: fewer than 3 whole iterations, so none is judged per iteration",
                                   plural(f.integer("iterations"), "iteration"));
            return "no iterations found (no ProfilerStep or Optimizer.step annotations, no loop over most of the "
                   "trace): live allocations are not judged per iteration";
        }
        case FactKind::iterations_many:
            return fmt::format("{} iterations: verdicts weigh them all, each site lists its last {}",
                               f.integer("iterations"), f.integer("listed"));
        case FactKind::block_history_only:
            return "this capture has a history per block (torch 2.0 or older) and no trace events: it does not say "
                   "when anything happened, so there is no timeline, peak, iterations or OOM replay; the live "
                   "allocations are named by site only";
        case FactKind::truncated_warmup:
            return "the ring buffer was truncated: allocations made before its first entry count as made before the "
                   "first iteration, and the timeline starts at its first entry";
        default:
            return "";
    }
}

}  // namespace

std::string phrase(const Fact& f) {
    // A series' comparability evidence names the pair of captures it is about.
    const auto between = f.has("between") ? fmt::format(" (between {})", f.word("between")) : std::string();
    for (auto* phrasing : {&totals_phrase, &comparison_phrase, &site_phrase, &series_phrase, &note_phrase,
                           &table_note_phrase, &oom_phrase, &replay_phrase})
        if (auto text = (*phrasing)(f); !text.empty()) return text + between;
    return std::string(analysis::to_string(f.kind)) + between;
}

std::string_view summary(Pattern p) { return text_of(p).summary; }
std::string_view fix(Pattern p) { return text_of(p).fix; }

std::string device_full_fix(const std::array<std::int64_t, analysis::category_count>& category_bytes,
                            const analysis::Facts& evidence) {
    using analysis::Category;
    const auto bytes = [&](std::initializer_list<Category> of) {
        std::int64_t sum = 0;
        for (const auto c : of) sum += category_bytes[static_cast<std::size_t>(c)];
        return sum;
    };
    std::int64_t total = 0;
    for (const auto b : category_bytes) total += b;
    const std::int64_t forward = bytes({Category::activation, Category::autocast_cache, Category::compiled_graph});
    const std::int64_t backward = bytes({Category::autograd_detail});
    const std::int64_t model = bytes({Category::parameter, Category::gradient, Category::optimizer_state});
    const std::int64_t step = bytes({Category::temporary});
    // Advice for what holds a tenth of the memory or more, largest first; the rest would not free it.
    std::vector<std::pair<std::int64_t, std::string>> parts;
    const auto share = [&](std::int64_t b) {
        return total > 0 ? util::percent(static_cast<double>(b) / static_cast<double>(total)) : "0";
    };
    const auto advise = [&](std::int64_t held, std::string_view what, std::string_view then) {
        if (held > 0 && held * 10 >= total)
            parts.emplace_back(held,
                               fmt::format("{} hold {} ({}%): {}", what, util::human_bytes(held), share(held), then));
    };
    advise(forward, "the forward's activations",
           "use smaller batches (or shorter sequences, smaller graphs), activation checkpointing or mixed precision");
    advise(backward, "backward's gradients of activations", "smaller batches or activation checkpointing");
    advise(model, "parameters, gradients and optimizer state",
           "shard the model (FSDP, ZeRO) or keep the optimizer state in lower precision");
    advise(step, "the optimizer step's temporaries", "a foreach=False or fused optimizer makes fewer at once");
    // A site that keeps memory every iteration is what filled the device: it comes first, and its
    // blocks (of no known category) need no line of their own.
    std::string leaks;
    for (const auto& f : evidence)
        if (f.kind == analysis::FactKind::oom_leak_site)
            leaks +=
                fmt::format("; first stop the leak at {}, which held {} at that moment", v(f, "site"), v(f, "held"));
    if (leaks.empty())
        advise(bytes({Category::unknown}), "blocks of no known category",
               "the live sites below say where they were made");
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string out = "find what holds the memory (the live sites and categories below)" + leaks;
    for (const auto& [held, text] : parts) out += "; " + text;
    return out;
}

std::string_view phrase(Advice a) {
    switch (a) {
        case Advice::leak_kept:
            return "Blocks allocated between the captures are still live in the second: something keeps them. The "
                   "sites below say where they were allocated; a snapshot does not record who holds them.";
        case Advice::leak_references:
            return "Look for references kept across steps in the code of the leading sites and their callers: lists, "
                   "dicts, attributes, globals, caches.";
        case Advice::leak_detach:
            return "Keep Python numbers or detached copies (`loss.item()`, `tensor.detach().cpu()`), run evaluation "
                   "under `torch.no_grad()`, and avoid `backward(retain_graph=True)` unless needed.";
        case Advice::leak_take_snapshots:
            return "Summaries cannot say where: take two snapshots at these steps "
                   "(torch.cuda.memory._record_memory_history(), then torch.cuda.memory._dump_snapshot()) and diff "
                   "them with memsnap to find the sites whose blocks stay.";
        case Advice::caveat_same_workload:
            return "One process is not shown: this verdict rests on the same sites holding the memory of both "
                   "captures. Captures from one run share trace events; record with enough max_entries to keep them.";
        case Advice::caveat_one_log:
            return "One process is not shown: this verdict rests on the tables coming from one log, in order. If "
                   "they come from separate runs, read it as levels.";
        case Advice::leak_kept_summaries:
            return "Allocated memory grew between the tables and did not come back: something keeps tensors alive.";
        case Advice::one_time_not_leak:
            return "Not a leak: memory that appears once and then stays (gradients at the first backward, optimizer "
                   "state at the first step, library workspaces, autocast's weight copies).";
        case Advice::compare_after_warmup:
            return "Compare two captures taken after warm-up, e.g. at steps 100 and 500.";
        case Advice::shape_bucket:
            return "As many live blocks as before, or fewer, hold more bytes: tensors got bigger, not more numerous. "
                   "Bucket or pad shapes to a few sizes, cap sequence lengths, or preallocate buffers to their final "
                   "size.";
        case Advice::growth_cannot_tell:
            return "The captures hold different amounts of memory; whether that is a leak cannot be told from them.";
        case Advice::growth_one_run:
            return "To judge a leak, take the captures in one run with torch.cuda.memory._record_memory_history() "
                   "on, a few hundred steps apart: trace events the captures share show one process.";
        case Advice::growth_summaries:
            return "Two summaries cannot show one process or one workload: log memory_summary() every N steps into one "
                   "file and run `memsnap trend` on it, or take snapshots with stacks.";
        case Advice::growth_order:
            return "Give the captures' steps (--steps) or step words in their names to judge behaviour over time.";
        case Advice::fragmentation_not_leak:
            return "Not a leak: live memory is flat while the caching allocator holds split, partly free segments it "
                   "cannot release.";
        case Advice::fragmentation_fix:
            return "Fix: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or "
                   "max_split_size_mb:<N>); keep batch shapes uniform.";
        case Advice::cache_not_leak:
            return "Not a leak: the extra reserved memory is free cache the allocator keeps for reuse, up to the "
                   "workload's high-water mark.";
        case Advice::cache_fix:
            return "Nothing to fix unless other processes need the memory; torch.cuda.empty_cache() returns it, and it "
                   "does not lower the peak a step needs.";
        case Advice::order_contradicted:
            return "The captures contradict the order given (a trace clock or a cumulative counter runs backwards): "
                   "give them in the order they were taken, or take them in one run.";
        case Advice::cache_levels:
            return "Live memory is the same within its noise floor; the captures differ in the free cache the "
                   "allocator keeps. Compared as levels, whether the cache grew in one run or another run reached a "
                   "higher peak (another batch or precision) cannot be told; neither is a leak.";
        case Advice::cache_levels_live_lower:
            return "Less memory is live after than before, yet more is reserved: free cache kept since a higher peak, "
                   "or split segments. Compared as levels, why (another batch, precision or model) cannot be told; "
                   "neither is a leak.";
        case Advice::shrink_levels:
            return "Less memory than before: compared as levels, this says nothing of memory freed over time.";
        case Advice::shrink_nothing:
            return "Memory went down between the captures: no growth to explain.";
        case Advice::stable_nothing:
            return "Allocated and reserved memory are flat: no growth between these captures.";
        case Advice::ooms_without_growth:
            return "OOMs without growth: one step needs more than the card (model + activations + optimizer state) or "
                   "one batch is unusually large; reduce batch size or use activation checkpointing.";
        case Advice::retries_near_limit:
            return "cudaMalloc retries mean the allocator had to free its cache to satisfy a request: memory is close "
                   "to the limit.";
    }
    return "";
}

std::string_view meaning(analysis::Verdict verdict) {
    return analysis::verdicts()[static_cast<std::size_t>(verdict)].meaning;
}

Node facts(std::string key, const analysis::Facts& list, std::string label) {
    auto out = Node::list(std::move(key), Layout::bullets, std::move(label));
    for (const auto& f : list) {
        auto& item = out.add(Node::object("", Layout::line));
        item.add("fact", Value::word(analysis::to_string(f.kind))).machines_only();
        for (const auto& [name, value] : f.values) {
            Value shown;
            switch (value.unit) {
                case FactValue::Unit::bytes:
                    shown = Value::bytes(value.integer);
                    break;
                case FactValue::Unit::count:
                    shown = Value::count(value.integer);
                    break;
                case FactValue::Unit::real:
                    shown = Value::number(value.real, 6);
                    break;
                case FactValue::Unit::text:
                    shown = Value::text_of(value.text);
                    break;
                case FactValue::Unit::flag:
                    shown = Value::flag(value.integer != 0);
                    break;
                case FactValue::Unit::bytes_range:
                    shown = Value::range({value.integer, value.high});
                    break;
                case FactValue::Unit::count_range:
                    shown = Value::count_range({value.integer, value.high});
                    break;
            }
            item.add(std::string(name), shown).machines_only();
        }
        item.add("text", Value::text_of(phrase(f)));
    }
    return out;
}

Node advice(std::string key, const std::vector<Advice>& list, std::string label) {
    auto out = Node::list(std::move(key), Layout::bullets, std::move(label));
    for (const auto a : list) {
        auto& item = out.add(Node::object("", Layout::line));
        item.add("advice", Value::word(analysis::to_string(a))).machines_only();
        item.add("text", Value::text_of(std::string(phrase(a))));
    }
    return out;
}

Node diagnosis(const analysis::Diagnosis& d, std::string key) {
    if (d.empty()) return Node::of(std::move(key), Value::none()).machines_only();
    auto out = Node::object(std::move(key), Layout::section);
    out.add("pattern", Value::word(analysis::to_string(*d.pattern)));
    if (d.site)
        out.add("leading_site",
                Value::text_of(d.share ? fmt::format("{} ({}% of the growth)", d.site->label(), util::percent(*d.share))
                                       : d.site->label()),
                "leading site");
    out.add("summary", Value::text_of(std::string(summary(*d.pattern))), "cause");
    out.add("fix", Value::text_of(std::string(fix(*d.pattern))));
    out.add(facts("evidence", d.evidence));
    return out;
}

std::string answer_text(analysis::Answer answer, const analysis::Facts& evidence) {
    const auto word = analysis::to_string(answer);
    if (evidence.empty()) return std::string(word);
    return fmt::format("{}: {}", word, phrase(evidence.front()));
}

}  // namespace memsnap::report::doc
