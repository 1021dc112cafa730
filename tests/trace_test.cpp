// `trace`: replay against the snapshot, iterations, what each iteration leaves live, and
// out-of-memory events explained, on real captures, variants of them, and made models.

#include "analysis/trace/trace_oom.hpp"
#include "analysis/trace/trace_replay.hpp"
#include "analysis_support.hpp"
#include "model_maker.hpp"
#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <set>

using namespace memsnap;

namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;
constexpr std::int64_t GiB = std::int64_t{1} << 30;

snapshot::Snapshot real(const char* name) {
    auto s = snapshot::load_snapshot((test::real_dir() / "snapshots" / name).string());
    s.source.path = name;  // goldens do not depend on where the checkout is
    return s;
}

analysis::TraceResult trace(const snapshot::Snapshot& snap, std::optional<std::int64_t> device_memory = {},
                            std::size_t top = 10) {
    analysis::AnalysisOptions options;
    options.top = top;
    analysis::TraceOptions t;
    t.device_memory = device_memory;
    return analysis::analyze_trace(snap, options, t);
}

snapshot::TraceEvent event(snapshot::TraceAction action, std::int64_t addr, std::int64_t size, std::int64_t time_us,
                           snapshot::StackId stack = {}) {
    snapshot::TraceEvent e;
    e.set_action(action);
    e.addr = addr;
    e.size = size;
    e.time_us = time_us;
    e.stack = stack;
    return e;
}

void annotate(snapshot::Snapshot& s, const std::string& name, const char* stage, std::int64_t time_us) {
    s.annotations.push_back({s.strings.intern(name), s.strings.intern(stage), 0, time_us});
}

// The trace of `base` (every allocation of which is freed in it) run `copies` times, each
// copy a ProfilerStep that also allocates one 2 MiB block at a new address from `stack`
// and never frees it: a leak of one allocation per iteration.
snapshot::Snapshot repeated_with_leak(const snapshot::Snapshot& base, int copies) {
    snapshot::Snapshot s = base;
    const auto leak = s.stacks.intern(std::vector<snapshot::FrameId>{
        s.frames.intern({s.strings.intern("/home/user/project/train.py"), s.strings.intern("train_step"), 88}),
        s.frames.intern({s.strings.intern("/home/user/project/train.py"), s.strings.intern("main"), 140})});
    const std::int64_t first = base.events.front().time_us, span = base.events.back().time_us - first + 10;
    const std::int64_t leak_base = std::int64_t{0x7e0000000000};
    std::vector<snapshot::TraceEvent> events;
    for (int k = 0; k < copies; ++k) {
        const std::int64_t shift = span * k;
        annotate(s, fmt::format("ProfilerStep#{}", k), "START", first + shift);
        for (auto e : base.events) {
            e.time_us += shift;
            events.push_back(e);
        }
        events.push_back(event(snapshot::TraceAction::alloc, leak_base + 2 * MiB * k, 2 * MiB,
                               base.events.back().time_us + shift + 1, leak));
        annotate(s, fmt::format("ProfilerStep#{}", k), "END", base.events.back().time_us + shift + 2);
    }
    s.events = {events.begin(), events.end()};
    // The leaked blocks are live in the snapshot, in a segment of their own.
    test::inject_blocks(s, leak, 2 * MiB, copies, leak_base);
    return s;
}

// A device with one segment of `segment` bytes whose live blocks are `live` (address offset,
// size), and a last event: an OOM for `requested` bytes with `device_free` free.
snapshot::Snapshot oom_model(std::int64_t segment, const std::vector<std::pair<std::int64_t, std::int64_t>>& live,
                             std::int64_t requested, std::int64_t device_free) {
    test::ModelMaker m;
    const auto stack =
        m.stack({{"/home/user/project/model.py", 12, "forward"}, {"/home/user/project/train.py", 40, "train_step"}});
    auto& s = m.model();
    const std::int64_t base = std::int64_t{0x7f0000000000};
    snapshot::Segment seg;
    seg.address = base;
    seg.total_size = segment;
    seg.segment_type = s.strings.intern("large");
    seg.first_block = 0;
    std::int64_t at = 0;
    std::int64_t time = 1000;
    for (const auto& [offset, size] : live) {
        if (offset > at) {  // a free block before it
            snapshot::Block gap;
            gap.address = base + at;
            gap.size = offset - at;
            gap.state = snapshot::BlockState::inactive;
            gap.state_name = s.strings.intern("inactive");
            s.blocks.push_back(gap);
        }
        snapshot::Block b;
        b.address = base + offset;
        b.size = b.requested_size = size;
        b.stack = stack;
        b.state = snapshot::BlockState::active_allocated;
        b.state_name = s.strings.intern("active_allocated");
        s.blocks.push_back(b);
        s.events.push_back(event(snapshot::TraceAction::alloc, base + offset, size, time++, stack));
        at = offset + size;
    }
    if (at < segment) {
        snapshot::Block gap;
        gap.address = base + at;
        gap.size = segment - at;
        gap.state = snapshot::BlockState::inactive;
        gap.state_name = s.strings.intern("inactive");
        s.blocks.push_back(gap);
    }
    seg.block_count = static_cast<std::uint32_t>(s.blocks.size());
    s.segments.push_back(seg);
    std::vector<snapshot::TraceEvent> events{event(snapshot::TraceAction::segment_alloc, base, segment, 999)};
    events.insert(events.end(), s.events.begin(), s.events.end());
    s.events = {events.begin(), events.end()};
    s.events.push_back(event(snapshot::TraceAction::oom, device_free, requested, time++, stack));
    return s;
}

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("trace on real captures: the replay agrees with the snapshot / no site is called a leak") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        for (const char* name : {"kkaitlyn111-a2_ctx128_forward.pickle", "kkaitlyn111-a2_small_forward_compiled.pickle",
                                 "maphsge4-select-n_llama_4dev.pickle", "nothanmin-a2_train_step.pickle",
                                 "silmont2000-a2_forward_bf16.pickle", "silmont2000-a2_forward_fp32.pickle",
                                 "silmont2000-a2_tiny.pickle", "yiyi-llm-inference_opt1.3b_torch2.0.pickle"}) {
            CAPTURE(name);
            const auto t = trace(real(name), std::nullopt, 0);
            CHECK(t.disagreements.empty());
            for (const auto& s : t.sites) CHECK(s.verdict != analysis::Verdict::leak);
            // A site's stacks shown and the rest add up to what it holds live.
            for (const auto& s : t.sites)
                if (!s.stacks.empty()) test::check_stacks_add_up(s, s.live_allocations, s.live_bytes);
            // The peak's sites listed and those not listed add up to its categories.
            std::int64_t listed = t.peak.usage.bytes_not_listed, categories = 0;
            for (const auto& s : t.peak.usage.sites) listed += s.bytes;
            for (const auto b : t.peak.usage.category_bytes) categories += b;
            CHECK(listed == categories);
            // The live sites listed and those not listed add up to what is allocated at the end,
            // all of them listed or three.
            for (const auto& some : {t, trace(real(name), std::nullopt, 3)}) {
                std::int64_t live = some.sites_not_listed_bytes, allocations = some.sites_not_listed_allocations;
                for (const auto& s : some.sites) live += s.live_bytes, allocations += s.live_allocations;
                CHECK(live == some.timeline.back().allocated);
                CHECK(allocations >= static_cast<std::int64_t>(some.sites_total));
                CHECK((some.sites_not_listed_allocations == 0) == (some.sites.size() == some.sites_total));
            }
            // The peak is at least what is allocated at the end; the timeline ends at the snapshot.
            CHECK(t.peak.bytes >= t.timeline.back().allocated);
            if (!t.truncated) CHECK(t.timeline.front().allocated >= 0);
        }
        // A peak is reached by an alloc, and is timed by it: not by the event after (on the OOM
        // capture, the OOM itself). A diff's peak, found in one pass, is the same moment.
        for (const char* name : {"constructor-sun-gnn_3dev_expandable_oom.pickle",
                                 "kkaitlyn111-a2_ctx128_forward.pickle", "nothanmin-a2_train_step.pickle",
                                 "silmont2000-a2_forward_fp32.pickle", "maphsge4-select-n_llama_4dev.pickle"}) {
            CAPTURE(name);
            const auto snap = real(name);
            const auto t = trace(snap);
            std::vector<snapshot::TraceEvent> device_events;
            for (const auto e : snap.events)
                if (e.device == t.device) device_events.push_back(e);
            REQUIRE(t.peak.event > 0);
            REQUIRE(t.peak.event <= device_events.size());
            const auto reached_by = device_events[t.peak.event - 1];
            CHECK(reached_by.action() == snapshot::TraceAction::alloc);
            CHECK(t.peak.time_us == reached_by.time_us);
            if (t.peak.event < device_events.size())
                CHECK(device_events[t.peak.event].action() != snapshot::TraceAction::alloc);
            // Counts of a site per iteration only where there are iterations (none is judged
            // here; the leak of one allocation per iteration below is).
            const auto j = nlohmann::json::parse(report::render(t, report::Format::json, {}));
            const bool judged = j.at("iterations_judged");
            for (const auto& site : j.at("sites")) {
                CHECK(site.at("leak_allocations_per_iteration").is_null() == !judged);
                CHECK(site.at("leak_bytes_per_iteration").is_null() == !judged);
                CHECK(site.at("warmup_allocations").is_null() == (j.at("iterations") == 0));
                CHECK(site.at("current_allocations").is_null() == (j.at("iterations") == 0));
            }
            const auto one_pass = analysis::trace_peak(snap, analysis::AnalysisOptions{});
            REQUIRE(one_pass);
            CHECK(one_pass->event == t.peak.event);
            CHECK(one_pass->time_us == t.peak.time_us);
            CHECK(one_pass->bytes == t.peak.bytes);
        }
        // One training step: live blocks with a stack (parameters, made with history on) have
        // no alloc event, so the ring buffer lost them; its one Optimizer.step spans the
        // optimizer's step alone, no iteration.
        const auto step = trace(real("nothanmin-a2_train_step.pickle"));
        CHECK(step.truncated);
        REQUIRE_FALSE(step.truncation_evidence.empty());
        CHECK(step.truncation_evidence.front().kind == analysis::FactKind::lost_history);
        // The blocks the ring buffer lost are among those from before its first entry, and their
        // stacks say where they were made.
        CHECK(step.live_before_trace_with_stack == step.truncation_evidence.front().integer("blocks"));
        CHECK(step.live_before_trace_with_stack < step.live_before_trace_blocks);
        CHECK(report::render(step, report::Format::text, {})
                  .find("the trace cannot say when; 656 of them carry the stack that made them") != std::string::npos);
        // At its peak the step before's gradients, made before the first entry, are still live:
        // zero_grad frees them later, which names them (327 of them, one per parameter).
        const auto gradients = std::find_if(
            step.peak.usage.sites.begin(), step.peak.usage.sites.end(),
            [](const analysis::LiveSite& s) { return s.site.name.find("freed by zero_grad") != std::string::npos; });
        REQUIRE(gradients != step.peak.usage.sites.end());
        CHECK(gradients->category == analysis::Category::gradient);
        CHECK(gradients->allocations == 327);
        CHECK(step.peak.usage.category_bytes[static_cast<std::size_t>(analysis::Category::gradient)] ==
              gradients->bytes);
        const auto one_pass = analysis::trace_peak(real("nothanmin-a2_train_step.pickle"), analysis::AnalysisOptions{});
        REQUIRE(one_pass);
        CHECK(one_pass->usage.category_bytes == step.peak.usage.category_bytes);
        CHECK(step.iteration_source == analysis::IterationSource::optimizer_step);
        CHECK(step.iterations == 0);
        CHECK_FALSE(step.iterations_judged);
        for (const auto& s : step.sites) CHECK(s.per_iteration.empty());
        for (const auto& s : step.sites) CHECK(s.verdict == analysis::Verdict::live);
        CHECK_FALSE(trace(real("silmont2000-a2_forward_fp32.pickle")).truncated);
        // Recording started late (stacks="all": every traced allocation has a stack): the live
        // blocks without one were made before the first entry, and the trace counts them so.
        // So it says, whether or not the trace frees such a block (fp32 frees none), and the
        // ring buffer is complete only since then.
        for (const char* name : {"kkaitlyn111-a2_ctx128_forward.pickle", "silmont2000-a2_forward_fp32.pickle",
                                 "silmont2000-a2_forward_bf16.pickle"}) {
            CAPTURE(name);
            const auto snap = real(name);
            std::int64_t blocks = 0, bytes = 0;
            for (const auto& b : snap.blocks)
                if (b.active() && b.stack == snapshot::no_stack) {
                    ++blocks;
                    bytes += b.size;
                }
            const auto t = trace(snap);
            CHECK(blocks > 0);
            CHECK(t.live_before_trace_blocks == blocks);
            CHECK(t.live_before_trace_bytes == bytes);
            CHECK(t.started_late);
            CHECK_FALSE(t.truncated);
            CHECK(t.live_before_trace_with_stack == 0);
            const auto text = report::render(t, report::Format::text, {});
            CHECK(text.find("ring buffer  complete since recording started") != std::string::npos);
        }
        // Block history of torch 2.0 (no stacks on its trace's allocs) shows no such thing.
        CHECK_FALSE(trace(real("yiyi-llm-inference_opt1.3b_torch2.0.pickle")).started_late);
        // The layers of one forward pass repeat but are no loop over the trace: not iterations.
        for (const char* name : {"kkaitlyn111-a2_ctx128_forward.pickle", "silmont2000-a2_forward_fp32.pickle"}) {
            CAPTURE(name);
            const auto forward = trace(real(name));
            CHECK(forward.iterations == 0);
            CHECK(forward.iteration_source == analysis::IterationSource::none);
            const auto none = std::find_if(forward.notes.begin(), forward.notes.end(),
                                           [](const auto& f) { return f.kind == analysis::FactKind::iterations_none; });
            REQUIRE(none != forward.notes.end());
            CHECK(none->word("why") == "repeats_not_loop");
        }
        // A capture without trace events is an input error that says how to record them, by
        // what the capture is.
        const auto message = [&](const char* name) {
            try {
                (void)trace(real(name));
            } catch (const Error& e) {
                return std::string(e.what());
            }
            return std::string("no error");
        };
        CHECK(message("kkaitlyn111-a2_segments_no_frames.pickle").find("_record_memory_history()") !=
              std::string::npos);
        CHECK(message("muduard-layoutediting_segment_list.pkl").find("segment list") != std::string::npos);
        CHECK(message("verl-megatron-vllm_pending_free.pickle").find("blocks carry stacks") != std::string::npos);
        // torch 2.0's one trace event, a free: no alloc recorded, so nothing tells whether the
        // ring buffer lost any.
        const auto old = trace(real("yiyi-llm-inference_opt1.3b_torch2.0.pickle"));
        CHECK_FALSE(old.recorded);
        const auto text = report::render(old, report::Format::text, {});
        CHECK(text.find("ring buffer  not judged: the trace holds no alloc events") != std::string::npos);
        CHECK(text.find("complete as far as") == std::string::npos);
    }

    TEST_CASE("trace: a replay that counts allocated bytes only counts them as the full replay does") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t replayed = 0;
        for (const auto& entry : std::filesystem::directory_iterator(test::real_dir() / "snapshots")) {
            if (entry.path().extension() != ".pickle") continue;
            const auto snap = real(entry.path().filename().string().c_str());
            CAPTURE(entry.path().filename().string());
            std::set<int> devices;
            for (const auto& e : snap.events) devices.insert(e.device);
            for (const int device : devices) {
                CAPTURE(device);
                const auto full = analysis::detail::replay(snap, device);
                const auto allocated = analysis::detail::replay(snap, device, analysis::detail::Counted::allocated);
                CHECK(full.reserved.size() == full.events.size() + 1);
                CHECK(allocated.reserved.empty());
                CHECK(allocated.allocated == full.allocated);
                CHECK(allocated.disagreements.size() == full.disagreements.size());
                // Events of one device (all of them when the trace has no other) in trace order.
                REQUIRE(full.events.size() == allocated.events.size());
                std::size_t on_device = 0;
                for (std::size_t i = 0; i < snap.events.size(); ++i)
                    if (snap.events[i].device == device) {
                        REQUIRE(on_device < full.events.size());
                        CHECK(full.events[on_device].time_us == snap.events[i].time_us);
                        CHECK(full.events[on_device].addr == snap.events[i].addr);
                        ++on_device;
                    }
                CHECK(on_device == full.events.size());
                if (!full.events.empty()) CHECK(full.events.first_at(full.events.back().time_us) < full.events.size());
                ++replayed;
            }
        }
        CHECK(replayed >= 10);
    }

    TEST_CASE("trace: a leak of one allocation per iteration in a real trace run five times ranks first") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto s = repeated_with_leak(real("silmont2000-a2_forward_fp32.pickle"), 5);
        const auto t = trace(s);
        CHECK(t.iteration_source == analysis::IterationSource::profiler_step);
        CHECK(t.iterations == 5);
        REQUIRE_FALSE(t.sites.empty());
        const auto& top = t.sites.front();
        CHECK(top.site.label() == "/home/user/project/train.py:88 train_step");
        CHECK(top.verdict == analysis::Verdict::leak);
        CHECK(top.live_allocations == 5);
        CHECK(top.per_iteration == std::vector<std::int64_t>(5, 1));
        CHECK(top.leak_allocations_per_iteration == 1);
        CHECK(top.leak_bytes_per_iteration == 2 * MiB);
        for (std::size_t i = 1; i < t.sites.size(); ++i) CHECK(t.sites[i].verdict != analysis::Verdict::leak);
        CHECK(t.disagreements.empty());
        // Goldens of every format.
        for (const auto format :
             {report::Format::text, report::Format::json, report::Format::markdown, report::Format::csv}) {
            CAPTURE(report::to_string(format));
            test::check_golden(fmt::format("trace/leak_per_iteration.{}", format == report::Format::text       ? "txt"
                                                                          : format == report::Format::json     ? "json"
                                                                          : format == report::Format::markdown ? "md"
                                                                                                               : "csv"),
                               report::render(t, format, {}));
        }
    }

    TEST_CASE("trace: Optimizer.step annotations cut iterations from one step to the next and not to its END") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // The same five copies, each annotated as the optimizer's step (START at its first event,
        // END after its leak): four iterations run from one START to the next; the last START
        // to its END is one step of the optimizer.
        auto s = repeated_with_leak(real("silmont2000-a2_forward_fp32.pickle"), 5);
        for (auto& a : s.annotations) a.name = s.strings.intern("Optimizer.step#AdamW.step");
        const auto t = trace(s);
        CHECK(t.iteration_source == analysis::IterationSource::optimizer_step);
        CHECK(t.iterations == 4);
        REQUIRE_FALSE(t.sites.empty());
        CHECK(t.sites.front().site.label() == "/home/user/project/train.py:88 train_step");
        CHECK(t.sites.front().per_iteration == std::vector<std::int64_t>(4, 1));
        CHECK(t.sites.front().current_allocations == 1);
        // One optimizer step alone makes no iteration.
        auto one = repeated_with_leak(real("silmont2000-a2_forward_fp32.pickle"), 1);
        for (auto& a : one.annotations) a.name = one.strings.intern("Optimizer.step#AdamW.step");
        const auto single = trace(one);
        CHECK(single.iteration_source == analysis::IterationSource::optimizer_step);
        CHECK(single.iterations == 0);
        for (const auto& site : single.sites) CHECK(site.per_iteration.empty());
    }

    // The capture records context="all": each free carries the stack where it was freed.
    TEST_CASE("trace: frees that carry their own stack do not tell a lost start from a late one") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        auto s = real("silmont2000-a2_forward_fp32.pickle");
        s.events = {s.events.begin() + static_cast<std::ptrdiff_t>(s.events.size() * 2 / 5), s.events.end()};
        const auto t = trace(s);
        // Its live blocks were made before recording (no stack): the loss shows only as frees of
        // blocks the trace never saw allocated, which a late start gives too.
        CHECK_FALSE(t.truncated);
        CHECK_FALSE(t.started_late);
        CHECK(t.start_unseen);
        REQUIRE(t.truncation_evidence.size() == 1);
        CHECK(t.truncation_evidence.front().kind == analysis::FactKind::start_unseen);
    }

    // context="alloc": a free carries its block's alloc stack, so the free of an unseen block
    // with a stack was of a block made with history on, whose alloc the ring buffer lost.
    TEST_CASE("trace: frees that carry their alloc stack show a ring buffer that lost its oldest entries") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        auto s = real("silmont2000-a2_forward_fp32.pickle");
        std::map<std::int64_t, snapshot::StackId> made;
        for (std::size_t i = 0; i < s.events.size(); ++i) {
            auto e = s.events[i];
            if (e.action() == snapshot::TraceAction::alloc) {
                made[e.addr] = e.stack;
            } else if (e.action() == snapshot::TraceAction::free_completed && made.count(e.addr)) {
                e.stack = made[e.addr];
                made.erase(e.addr);
                s.events.set(i, e);
            }
        }
        CHECK_FALSE(trace(s).truncated);  // whole: every free pairs with its alloc
        s.events = {s.events.begin() + static_cast<std::ptrdiff_t>(s.events.size() * 2 / 5), s.events.end()};
        const auto t = trace(s);
        CHECK(t.truncated);
        CHECK_FALSE(t.started_late);
        CHECK_FALSE(t.start_unseen);
        REQUIRE_FALSE(t.truncation_evidence.empty());
        CHECK(t.truncation_evidence.front().kind == analysis::FactKind::frees_unseen);
    }

}  // TEST_SUITE

TEST_SUITE("unit") {
    TEST_CASE("trace: out-of-memory events explained for each class with the numbers of their moment") {
        SUBCASE("device_full: everything reserved is live") {
            const auto t = trace(oom_model(GiB, {{0, GiB}}, 512 * MiB, 10 * MiB));
            REQUIRE(t.ooms.size() == 1);
            const auto& o = t.ooms[0];
            CHECK(o.classification == analysis::Pattern::device_full);
            CHECK(o.requested_bytes == 512 * MiB);
            CHECK(o.device_free_bytes == 10 * MiB);
            CHECK(o.allocated_bytes == GiB);
            CHECK(o.reserved_bytes == GiB);
            CHECK(o.largest_free_block_bytes == 0);
            REQUIRE(o.frame.has_value());
            CHECK(o.frame->name == "forward");
            CHECK(o.usage.sites.front().bytes == GiB);
        }
        SUBCASE("fragmentation: 500 MiB free in 100 MiB pieces, 200 MiB asked") {
            std::vector<std::pair<std::int64_t, std::int64_t>> live;
            for (int k = 0; k < 5; ++k) live.emplace_back(k * 200 * MiB, 100 * MiB);  // free gaps of 100 MiB
            const auto t = trace(oom_model(GiB, live, 200 * MiB, 10 * MiB));
            REQUIRE(t.ooms.size() == 1);
            const auto& o = t.ooms[0];
            CHECK(o.classification == analysis::Pattern::fragmentation_oom);
            CHECK(o.allocated_bytes == 500 * MiB);
            CHECK(o.largest_free_block_bytes == 124 * MiB);  // the last gap runs to the segment's end
            CHECK(std::any_of(o.evidence.begin(), o.evidence.end(),
                              [](const auto& f) { return f.kind == analysis::FactKind::oom_largest_free; }));
        }
        SUBCASE("other_process: 1 GiB reserved, 10 MiB free, of a 24 GiB device") {
            const auto t = trace(oom_model(GiB, {{0, GiB}}, 512 * MiB, 10 * MiB), 24 * GiB);
            REQUIRE(t.ooms.size() == 1);
            CHECK(t.ooms[0].classification == analysis::Pattern::other_process);
            CHECK(t.ooms[0].device_memory_bytes == 24 * GiB);
        }
        SUBCASE("a --device-memory below reserved and free together is said to be impossible and not used") {
            // 1 GiB reserved and 10 MiB free: a device of 512 MiB cannot hold that.
            const auto t = trace(oom_model(GiB, {{0, GiB}}, 512 * MiB, 10 * MiB), 512 * MiB);
            REQUIRE(t.ooms.size() == 1);
            const auto& o = t.ooms[0];
            CHECK_FALSE(o.device_memory_bytes.has_value());
            CHECK(o.classification != analysis::Pattern::other_process);
            const auto too_small = std::find_if(o.evidence.begin(), o.evidence.end(), [](const auto& f) {
                return f.kind == analysis::FactKind::oom_capacity_too_small;
            });
            REQUIRE(too_small != o.evidence.end());
            CHECK(too_small->integer("held") == GiB + 10 * MiB);
        }
        SUBCASE("single_huge_request: 100 GiB asked of an 80 GiB device") {
            const auto t = trace(oom_model(GiB, {{0, 100 * MiB}}, 100 * GiB, 70 * GiB), 80 * GiB);
            REQUIRE(t.ooms.size() == 1);
            CHECK(t.ooms[0].classification == analysis::Pattern::single_huge_request);
            // Without the capacity, a request beyond cache and free memory together says so too.
            CHECK(trace(oom_model(GiB, {{0, 100 * MiB}}, 100 * GiB, 70 * GiB)).ooms[0].classification ==
                  analysis::Pattern::single_huge_request);
        }
        SUBCASE("the moment, not the end: memory freed after the OOM still counts at the OOM") {
            auto s = oom_model(GiB, {{0, 512 * MiB}, {512 * MiB, 512 * MiB}}, 256 * MiB, 0);
            // After the OOM the program frees the second block: the snapshot shows it free.
            s.events.push_back(event(snapshot::TraceAction::free_completed, std::int64_t{0x7f0000000000} + 512 * MiB,
                                     512 * MiB, 5000, s.events.back().stack));
            s.blocks[1].state = snapshot::BlockState::inactive;
            s.blocks[1].state_name = s.strings.intern("inactive");
            const auto t = trace(s);
            REQUIRE(t.ooms.size() == 1);
            CHECK(t.ooms[0].allocated_bytes == GiB);
            CHECK(t.ooms[0].classification == analysis::Pattern::device_full);
            CHECK(t.timeline.back().allocated == 512 * MiB);
            test::check_golden("trace/oom_device_full.txt", report::render(t, report::Format::text, {}));
            test::check_golden("trace/oom_device_full.json", report::render(t, report::Format::json, {}));
        }
    }

}  // TEST_SUITE

TEST_CASE("trace: torch 2.0 and older captures with a history per block and no trace events" *
          doctest::test_suite("unit")) {
    // memory_snapshot() of torch 1.13: the segments list, each block with its history.
    auto snap = snapshot::load_snapshot(
        (test::fixtures_dir() / "snapshots" / "gen_torch1.13_segments_history.pickle").string());
    snap.source.path = "gen_torch1.13_segments_history.pickle";
    REQUIRE(snap.events.empty());
    const auto t = trace(snap);
    CHECK(t.source == "block history");
    CHECK_FALSE(t.ordered());
    CHECK(t.iterations == 0);
    CHECK(t.timeline.empty());
    CHECK(t.ooms.empty());
    // Every live block with a history is one live allocation, named by its site.
    std::int64_t live_blocks = 0, live_bytes = 0;
    for (const auto& b : snap.blocks)
        if (b.live() && b.stack != snapshot::no_stack) {
            ++live_blocks;
            live_bytes += b.size;
        }
    std::int64_t allocations = 0, bytes = 0;
    for (const auto& s : t.sites) {
        CHECK(s.verdict == analysis::Verdict::live);
        allocations += s.live_allocations;
        bytes += s.live_bytes;
    }
    CHECK(t.sites.size() == t.sites_total);
    CHECK(allocations == live_blocks);
    CHECK(bytes == live_bytes);
    CHECK(t.sites.front().site.name == "forward");
    CHECK(t.sites.front().live_bytes == 62 * MiB);
    REQUIRE_FALSE(t.notes.empty());
    CHECK(t.notes.back().kind == analysis::FactKind::block_history_only);
    test::check_golden("trace/block_history.txt", report::render(t, report::Format::text, {}));
    const auto j = nlohmann::json::parse(report::render(t, report::Format::json, {}));
    CHECK(j.at("source") == "block history");
    CHECK(j.at("peak").is_null());
    CHECK(j.at("timeline").empty());
}

TEST_CASE("trace: snapshot events are marked / the replay of the newest generation agrees with its snapshot" *
          doctest::test_suite("unit")) {
    auto snap = snapshot::load_snapshot((test::fixtures_dir() / "snapshots" / "gen_torch2.9_newest.pickle").string());
    const auto t = trace(snap);
    REQUIRE(t.snapshot_events.size() == 1);
    CHECK(t.snapshot_events.front() == t.events - 1);  // the last event, as the generator wrote it
    CHECK(std::any_of(t.timeline.begin(), t.timeline.end(),
                      [&](const analysis::TimelinePoint& p) { return p.event == t.snapshot_events.front(); }));
    const auto j = nlohmann::json::parse(report::render(t, report::Format::json, {}));
    CHECK(j.at("snapshot_events") == nlohmann::json::array({t.events - 1}));
}

TEST_CASE("trace: an out-of-memory moment counted back below 0 is called impossible and not a single huge request" *
          doctest::test_suite("unit")) {
    analysis::OomExplanation oom;
    oom.requested_bytes = 5 * GiB;
    oom.device_free_bytes = GiB / 8;
    oom.allocated_bytes = 19 * GiB;
    oom.reserved_bytes = -12 * 1024 * GiB;  // a trace that does not match its snapshot
    analysis::detail::classify_oom(oom, "made.pickle");
    const auto impossible = std::find_if(oom.evidence.begin(), oom.evidence.end(), [](const analysis::Fact& f) {
        return f.kind == analysis::FactKind::oom_levels_impossible;
    });
    REQUIRE(impossible != oom.evidence.end());
    CHECK(impossible->integer("reserved") == -12 * 1024 * GiB);
    CHECK(oom.classification != analysis::Pattern::single_huge_request);
    // The same request with levels a device can hold: larger than all it held, one huge request.
    analysis::OomExplanation possible;
    possible.requested_bytes = 5 * GiB;
    possible.device_free_bytes = GiB / 8;
    possible.allocated_bytes = GiB;
    possible.reserved_bytes = 2 * GiB;
    analysis::detail::classify_oom(possible, "made.pickle");
    CHECK(possible.classification == analysis::Pattern::single_huge_request);
    CHECK(std::none_of(possible.evidence.begin(), possible.evidence.end(),
                       [](const analysis::Fact& f) { return f.kind == analysis::FactKind::oom_levels_impossible; }));
}

TEST_CASE("trace: no real capture has an out-of-memory moment with impossible levels" * doctest::test_suite("real")) {
    if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
    std::size_t ooms = 0;
    for (const auto& file : test::files_in(test::real_dir() / "snapshots")) {
        if (file.extension() != ".pickle" && file.extension() != ".pkl") continue;
        CAPTURE(file.string());
        const auto report = analysis::explain_ooms(snapshot::load_snapshot(file.string()), analysis::AnalysisOptions{},
                                                   analysis::TraceOptions{});
        for (const auto& oom : report.ooms) {
            ++ooms;
            CHECK(oom.allocated_bytes >= 0);
            CHECK(oom.reserved_bytes >= 0);
        }
    }
    // The 3-device GNN capture's out-of-memory error when this was written.
    CHECK(ooms >= 1);
}
