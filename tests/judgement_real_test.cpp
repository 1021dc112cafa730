// Judgement on real captures in the shapes people bring them (issue: verdicts a user can
// trust): re-runs in another checkout, Windows paths, torch.compile, forward vs a full
// training step, another device, partial summaries, stacks='all'. No site is called a leak
// and no retained-reference advice appears, except where a leak was injected; injected
// leaks rank first, exact to the byte.

#include "analysis_support.hpp"
#include "model_maker.hpp"
#include "stats_support.hpp"
#include "support.hpp"
#include "variants.hpp"

#include <memsnap/analysis/diff/snapshot_diff.hpp>
#include <memsnap/analysis/gates.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>
#include <memsnap/stats/text_reader.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <limits>
#include <map>
#include <sstream>

using namespace memsnap;
using analysis::Advice;
using analysis::Answer;
using analysis::Category;
using analysis::Pattern;
using analysis::Verdict;

namespace {

snapshot::Snapshot real(const std::string& name) {
    return snapshot::load_snapshot((test::real_dir() / "snapshots" / name).string());
}

std::vector<std::string> real_with_stacks() {
    std::vector<std::string> out;
    for (const auto& f : test::files_in(test::real_dir() / "snapshots", ".pickle")) {
        const auto snap = snapshot::load_snapshot(f.string());
        for (const auto& b : snap.blocks)
            if (b.live() && b.stack != snapshot::no_stack) {
                out.push_back(f.filename().string());
                break;
            }
    }
    return out;
}

// A trend of real captures with every site, at `steps` (none given: in the order given).
analysis::TrendResult real_trend(const std::vector<std::string>& names, std::vector<std::int64_t> steps = {}) {
    const auto every = test::all_sites();
    std::vector<analysis::SeriesCapture> series;
    for (const auto& name : names) series.push_back({name, analysis::describe_snapshot(real(name), every)});
    analysis::TrendOptions trend;
    trend.steps = std::move(steps);
    return analysis::trend_snapshots(std::move(series), every, trend);
}

std::string root_of(const snapshot::Snapshot& snap) { return analysis::StackIndex({&snap}, {}, {}).project_root(0); }

bool retained(const analysis::Diagnosis& d) {
    return d.pattern == Pattern::retained_tensors || d.pattern == Pattern::retained_graph ||
           d.pattern == Pattern::retained_graph_site;
}

// No leak verdict, and none of the advice or causes that only a leak carries.
void check_no_false_leak(const analysis::SnapshotDiff& d) {
    CHECK(d.verdict != Verdict::leak);
    for (const auto& s : d.sites) {
        CAPTURE(s.site.label());
        CHECK(s.verdict != Verdict::leak);
        CHECK_FALSE(retained(s.diagnosis));
    }
    CHECK_FALSE(retained(d.overall));
    for (const auto a : {Advice::leak_kept, Advice::leak_references, Advice::leak_detach}) {
        CAPTURE(analysis::to_string(a));
        CHECK(std::find(d.advice.begin(), d.advice.end(), a) == d.advice.end());
    }
}

using test::user_stack;

const test::Variant rerun_of(const snapshot::Snapshot& snap) {
    return {test::rerun_paths(root_of(snap)), 0x100000000000, 3'600'000'000, std::nullopt};
}

constexpr std::int64_t kLeakSize = 3 * 1024 * 1024 + 512;
constexpr int kLeakCount = 40;

}  // namespace

TEST_SUITE("real") {
    TEST_CASE("a re-run in another checkout is two workloads: no leak / sites matched by identity") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        for (const auto& name : real_with_stacks()) {
            CAPTURE(name);
            const auto before = real(name);
            const auto after = test::make_variant(before, rerun_of(before));
            const auto d = analysis::diff_snapshots(before, after, test::with_steps(100, 500));
            CHECK(d.comparability.same_process == Answer::no);
            check_no_false_leak(d);
            // The same workload: every site found again under its new path, none grew.
            CHECK(d.sites_total == static_cast<std::size_t>(test::describe(before).site_count));
            for (const auto& s : d.sites) {
                CAPTURE(s.site.label());
                CHECK(s.delta_bytes == 0);
                CHECK(s.verdict == Verdict::stable);
            }
            CHECK(d.verdict == Verdict::stable);

            // An injected allocation still ranks first, exact to the byte, but the re-run cannot
            // call it a leak.
            const auto stack = user_stack(after);
            if (!stack) continue;
            auto grown = after;
            test::inject_blocks(grown, *stack, kLeakSize, kLeakCount);
            const auto g = analysis::diff_snapshots(before, grown, test::with_steps(100, 500));
            REQUIRE(!g.sites.empty());
            CHECK(g.sites.front().delta_bytes == kLeakSize * kLeakCount);
            CHECK(g.sites.front().delta_blocks == kLeakCount);
            CHECK(g.sites.front().verdict == Verdict::growth);
            check_no_false_leak(g);
        }
    }

    TEST_CASE("an injected leak in one process ranks first and is called a leak / whatever the totals say") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        int tested = 0;
        for (const auto& name : real_with_stacks()) {
            CAPTURE(name);
            const auto before = real(name);
            const auto stack = user_stack(before);
            if (!stack) continue;
            auto after = before;
            test::inject_blocks(after, *stack, kLeakSize, kLeakCount);
            const auto d = analysis::diff_snapshots(before, after, test::with_steps(100, 500));
            // Shared trace events prove one process. Without a timed trace, one process is not
            // ruled out: the leak needs the same sites at both captures, with its caveat, and
            // a capture whose memory mostly has no stack cannot show them: levels only.
            const auto& c = d.comparability;
            CHECK(c.same_process == (test::has_timed_trace(before) ? Answer::yes : Answer::unknown));
            CHECK(c.behaviour_allowed() == (c.same_process == Answer::yes || test::stacked_share(before) >= 0.5));
            REQUIRE(!d.sites.empty());
            CHECK(d.sites.front().delta_bytes == kLeakSize * kLeakCount);
            if (!c.behaviour_allowed()) {
                CHECK(c.same_workload == Answer::unknown);
                CHECK(d.verdict == Verdict::growth);
                CHECK(d.sites.front().verdict == Verdict::growth);
                CHECK(d.sites.front().diagnosis.empty());
                check_no_false_leak(d);
                continue;
            }
            CHECK(c.caveat() == (c.same_process != Answer::yes));
            CHECK(d.verdict == Verdict::leak);
            CHECK(d.sites.front().verdict == Verdict::leak);
            CHECK(d.sites.front().diagnosis.pattern == Pattern::retained_tensors);
            for (const auto& s : d.sites)
                if (s.rank > 1) CHECK(s.verdict != Verdict::leak);
            ++tested;
        }
        CHECK(tested >= 4);
    }

    TEST_CASE("Windows paths name the same sites / and site-packages is never user code") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        for (const auto& name : real_with_stacks()) {
            CAPTURE(name);
            const auto unix_capture = real(name);
            const auto root = root_of(unix_capture);
            const auto windows = test::make_variant(unix_capture, {test::windows_paths(root), 0, 0, std::nullopt});
            auto all = test::all_sites();
            const auto a = test::describe(unix_capture, all), w = test::describe(windows, all);
            REQUIRE(a.top_sites.size() == w.top_sites.size());
            const auto to_windows = test::windows_paths(root);
            for (std::size_t i = 0; i < a.top_sites.size(); ++i) {
                CAPTURE(a.top_sites[i].site.label());
                CHECK(w.top_sites[i].bytes == a.top_sites[i].bytes);
                CHECK(w.top_sites[i].site.user_code == a.top_sites[i].site.user_code);
                CHECK(w.top_sites[i].site.filename == to_windows(a.top_sites[i].site.filename));
                CHECK(w.top_sites[i].category == a.top_sites[i].category);
                if (w.top_sites[i].site.user_code)
                    CHECK(w.top_sites[i].site.filename.find("site-packages") == std::string::npos);
            }
            // Diffed against the Unix capture: another machine, the same sites.
            const auto d = analysis::diff_snapshots(unix_capture, windows, test::all_sites());
            check_no_false_leak(d);
            for (const auto& s : d.sites) CHECK(s.delta_bytes == 0);
        }
    }

    TEST_CASE("torch.compile: generated code is never a site / sites name the user module / marked compiled") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto compiled = real("kkaitlyn111-a2_small_forward_compiled.pickle");
        auto all = test::all_sites();
        const auto info = test::describe(compiled, all);
        CHECK(info.site_count < 50);  // not one site per line of generated code
        std::size_t marked = 0;
        for (const auto& s : info.top_sites) {
            CAPTURE(s.site.label());
            CHECK(s.site.filename.find("torchinductor") == std::string::npos);
            if (s.site.compiled_graph) {
                ++marked;
                CHECK(s.site.user_code);
                CHECK(s.site.label().ends_with(" (torch.compile graph)"));
                // Compiled code's own buffers; a cuBLAS workspace made inside it stays a workspace.
                CHECK((s.category == Category::compiled_graph || s.category == Category::workspace));
            }
        }
        CHECK(marked >= 5);
        const auto d = analysis::diff_snapshots(compiled, test::make_variant(compiled, rerun_of(compiled)), all);
        check_no_false_leak(d);
    }

    TEST_CASE("a forward pass against a full training step is one-time growth / not a leak") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto step = real("nothanmin-a2_train_step.pickle");
        // The same process before backward and the optimizer step: no gradients, no optimizer state.
        auto forward = step;
        analysis::StackIndex index({&step}, {}, {});
        std::int64_t removed = 0;
        for (auto& b : forward.blocks) {
            const auto c = index.category(0, b.stack);
            if (b.live() && (c == Category::gradient || c == Category::optimizer_state)) {
                b.state = snapshot::BlockState::inactive;
                b.state_name = forward.strings.intern("inactive");
                removed += b.size;
            }
        }
        REQUIRE(removed > 10ll << 30);  // about 3x the parameters: grads + Adam's two states
        const auto d = analysis::diff_snapshots(forward, step, test::all_sites());
        CHECK(d.comparability.same_process == Answer::yes);
        CHECK(d.verdict == Verdict::one_time_growth);
        CHECK(d.overall.pattern == Pattern::optimizer_first_step);
        CHECK(d.categories[static_cast<std::size_t>(Category::gradient)].delta_bytes() > 0);
        CHECK(d.categories[static_cast<std::size_t>(Category::optimizer_state)].delta_bytes() > 0);
        check_no_false_leak(d);
        for (const auto& s : d.sites)
            if (s.delta_bytes > 0) CHECK(s.verdict == Verdict::one_time_growth);

        // The same pair with a leak injected: the leak ranks first, the one-time growth after it.
        auto leaky = step;
        const auto stack = user_stack(step);
        REQUIRE(stack);
        test::inject_blocks(leaky, *stack, kLeakSize, kLeakCount);
        const auto l = analysis::diff_snapshots(forward, leaky, test::all_sites());
        CHECK(l.verdict == Verdict::leak);
        CHECK(l.sites.front().verdict == Verdict::leak);
        CHECK(l.sites.front().delta_bytes == kLeakSize * kLeakCount);
    }

    TEST_CASE("device 0 against device 1: said on standard error and in JSON / and no leak") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // The smallest real capture: the CLI reads both back as JSON.
        const auto zero = real("silmont2000-a2_tiny.pickle");
        const auto one = test::make_variant(zero, {nullptr, 0, 0, 1});
        const auto d = analysis::diff_snapshots(zero, one, test::all_sites());
        CHECK(d.devices.before == std::vector<int>{0});
        CHECK(d.devices.after == std::vector<int>{1});
        CHECK(d.comparability.same_process == Answer::no);
        REQUIRE(!d.warnings.empty());
        check_no_false_leak(d);

        const auto a = test::write_temp("device0.json", test::to_json(zero));
        const auto b = test::write_temp("device1.json", test::to_json(one));
        const auto run = test::run_memsnap("diff --format json " + test::quote(a) + " " + test::quote(b));
        CHECK(run.exit_code == 0);
        CHECK(run.err.find("memsnap: warning: the captures hold different devices (0 before, 1 after)") !=
              std::string::npos);
        const auto j = nlohmann::json::parse(run.out);
        CHECK(j.at("devices").at("before") == nlohmann::json::array({0}));
        CHECK(j.at("devices").at("after") == nlohmann::json::array({1}));
        CHECK(j.at("same_process") == false);
        const auto missing = test::run_memsnap("diff --device 0 " + test::quote(a) + " " + test::quote(b));
        CHECK(missing.exit_code == 2);
        CHECK(missing.err.find("--device 0: no segment is on it") != std::string::npos);
        CHECK(missing.err.find("the capture's segments are on device 1 only") != std::string::npos);
        const auto info = test::run_memsnap("info --device 1 --format json " + test::quote(b));
        CHECK(info.exit_code == 0);
        CHECK(nlohmann::json::parse(info.out).at("device") == 1);
        std::filesystem::remove(a);
        std::filesystem::remove(b);
    }

    TEST_CASE("stacks='all': Python frames first in text and Markdown / C++ frames a count unless asked") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto before = real("nothanmin-a2_train_step.pickle");
        auto after = before;
        const auto stack = user_stack(before);
        REQUIRE(stack);
        test::inject_blocks(after, *stack, kLeakSize, kLeakCount);
        auto options = test::all_sites();
        options.top = 3;
        const auto d = analysis::diff_snapshots(before, after, options);
        const auto text = test::render(d);
        const auto at = text.find("stack (+40 x");
        REQUIRE(at != std::string::npos);
        std::istringstream lines(text.substr(at));
        std::string header, first;
        std::getline(lines, header);
        std::getline(lines, first);
        CHECK(first.find(".py:") != std::string::npos);  // a Python frame, not an allocator one
        CHECK(text.find("C++ frames not shown: --cpp-frames shows them") != std::string::npos);
        CHECK(text.find("at::") == std::string::npos);
        report::RenderOptions cpp;
        cpp.cpp_frames = true;
        CHECK(test::render(d, report::Format::text, cpp).find("at::") != std::string::npos);
        CHECK(test::render(d, report::Format::markdown).find("at::") == std::string::npos);
    }

    TEST_CASE("categories of real captures / by hand for a sample of stacks") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        struct Expected {
            const char* file;
            const char* site;  // a label, or the end of one
            Category category;
        };
        const Expected table[] = {
            {"nothanmin-a2_train_step.pickle", "<no Python frame>", Category::gradient},
            {"nothanmin-a2_train_step.pickle", "adapters.py:887 step", Category::optimizer_state},
            {"nothanmin-a2_train_step.pickle", "adapters.py:888 step", Category::optimizer_state},
            {"nothanmin-a2_train_step.pickle", "adapters.py:36 forward", Category::activation},
            {"nothanmin-a2_train_step.pickle", "adapters.py:204 forward", Category::workspace},
            {"nothanmin-a2_train_step.pickle", "<no stack: 27262976-byte blocks>", Category::unknown},
            {"kkaitlyn111-a2_ctx128_forward.pickle", "transformer.py:22 forward", Category::activation},
            {"kkaitlyn111-a2_ctx128_forward.pickle", "transformer.py:138 softmax", Category::activation},
            {"kkaitlyn111-a2_small_forward_compiled.pickle", "transformer.py:22 forward (torch.compile graph)",
             Category::compiled_graph},
            {"maphsge4-select-n_llama_4dev.pickle", "modeling_bert.py:703 forward", Category::activation},
            {"maphsge4-select-n_llama_4dev.pickle", "modeling_bert.py:286 forward", Category::workspace},
            {"silmont2000-a2_tiny.pickle", "<no Python frame>", Category::gradient},
            {"silmont2000-a2_tiny.pickle", "trace_peak_memory.py:12 custom_scaled_dot_product_attention",
             Category::workspace},
            {"silmont2000-a2_tiny.pickle", "trace_peak_memory.py:35 main", Category::unknown},
            // 8519680 bytes under a Python-only stack: cuBLAS's default workspace, made by the first matmul
            {"yiyi-llm-inference_opt1.3b_torch2.0.pickle", "pytorch_backend.py:321 mha", Category::workspace},
        };
        for (const auto& e : table) {
            CAPTURE(std::string(e.file));
            CAPTURE(std::string(e.site));
            const auto info = test::describe(real(e.file), test::all_sites());
            // Sites are kept apart by category: the site with this label holds this category.
            bool found = false;
            for (const auto& s : info.top_sites) found |= s.site.label().ends_with(e.site) && s.category == e.category;
            CHECK(found);
        }
        // Every live block of every real capture has one category: they add up to allocated.
        for (const auto& f : test::files_in(test::real_dir() / "snapshots", ".pickle")) {
            CAPTURE(f.string());
            const auto info = test::describe(snapshot::load_snapshot(f.string()));
            std::int64_t bytes = 0;
            for (const auto& c : info.categories) bytes += c.bytes;
            CHECK(bytes == info.totals.allocated_bytes);
        }
    }

    TEST_CASE(
        "categories: a Lightning closure spliced into real stacks keeps every category / none becomes optimizer "
        "state") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // PyTorch Lightning's automatic optimization runs forward and backward inside
        // optimizer.step(closure): every frame of the training step gets these outer frames.
        const std::vector<test::FrameSpec> lightning = {
            {"/venv/lib/python3.11/site-packages/lightning/pytorch/loops/optimization/automatic.py", 146, "__call__"},
            {"/venv/lib/python3.11/site-packages/torch/optim/adamw.py", 187, "step"},
            {"/venv/lib/python3.11/site-packages/torch/optim/optimizer.py", 485, "wrapper"},
            {"/venv/lib/python3.11/site-packages/lightning/pytorch/core/optimizer.py", 154, "step"},
            {"/venv/lib/python3.11/site-packages/lightning/pytorch/loops/optimization/automatic.py", 270,
             "_optimizer_step"},
        };
        int spliced = 0;
        for (const char* name : {"nothanmin-a2_train_step.pickle", "kkaitlyn111-a2_ctx128_forward.pickle",
                                 "wedsonlin-a2_medium128_training.pickle", "silmont2000-a2_tiny.pickle"}) {
            CAPTURE(std::string(name));
            auto snap = real(name);
            analysis::StackIndex before({&snap}, {}, {});
            std::map<snapshot::StackId, Category> original;
            for (const auto& b : snap.blocks)
                if (b.live() && b.stack != snapshot::no_stack) original[b.stack] = before.category(0, b.stack);
            auto closure = snap;
            std::map<snapshot::StackId, snapshot::StackId> moved;
            for (const auto& [stack, category] : original) {
                // Only what runs inside the closure: the optimizer's own state is made outside it.
                if (category == Category::optimizer_state || category == Category::parameter) continue;
                moved[stack] = test::stack_with_outer_frames(closure, stack, lightning);
            }
            analysis::StackIndex after({&closure}, {}, {});
            for (const auto& entry : moved) {
                const auto& stack = entry.first;  // not a binding: CAPTURE is a lambda (clang 14)
                const auto& spliced_stack = entry.second;
                CAPTURE(analysis::to_string(original[stack]));
                CHECK(after.category(0, spliced_stack) == original[stack]);
                ++spliced;
            }
        }
        CHECK(spliced >= 50);

        // Gradient clipping inside the closure (_foreach_norm) is not optimizer state; a torch
        // optimizer's own state, made by its step outside the closure, is; so is the state a
        // user's Optimizer subclass makes in its own step.
        auto snap = real("silmont2000-a2_tiny.pickle");
        const auto stack = [&](const std::vector<test::FrameSpec>& frames) {
            std::vector<snapshot::FrameId> ids;
            for (const auto& [file, line, fn] : frames)
                ids.push_back(snap.frames.intern({snap.strings.intern(file), snap.strings.intern(fn), line}));
            return snap.stacks.intern(ids);
        };
        const std::string torch = "/venv/lib/python3.11/site-packages/torch/";
        std::vector<test::FrameSpec> clip = {{torch + "nn/utils/clip_grad.py", 102, "clip_grad_norm_"},
                                             {"/venv/lib/python3.11/site-packages/lightning/pytorch/plugins/"
                                              "precision/precision.py",
                                              188, "clip_gradients"}};
        clip.insert(clip.end(), lightning.begin(), lightning.end());
        const std::vector<test::FrameSpec> state = {{torch + "optim/adamw.py", 121, "_init_group"},
                                                    {torch + "optim/adamw.py", 187, "step"},
                                                    {torch + "optim/optimizer.py", 485, "wrapper"},
                                                    lightning[3],
                                                    lightning[4]};
        const std::vector<test::FrameSpec> own = {{"/home/u/proj/adapters.py", 887, "step"},
                                                  {torch + "optim/optimizer.py", 485, "wrapper"},
                                                  {"/home/u/proj/train.py", 40, "train_step"}};
        std::vector<test::FrameSpec> own_in_closure = {{"/home/u/proj/train.py", 12, "training_step"}};
        own_in_closure.insert(own_in_closure.end(), lightning.begin(), lightning.begin() + 1);
        own_in_closure.push_back({"/home/u/proj/adapters.py", 887, "step"});
        own_in_closure.push_back({torch + "optim/optimizer.py", 485, "wrapper"});
        const auto clip_id = stack(clip), state_id = stack(state), own_id = stack(own),
                   mixed_id = stack(own_in_closure);
        analysis::StackIndex index({&snap}, {}, {});
        CHECK(index.category(0, clip_id) != Category::optimizer_state);
        CHECK(index.category(0, state_id) == Category::optimizer_state);
        CHECK(index.category(0, own_id) == Category::optimizer_state);
        CHECK(index.category(0, mixed_id) != Category::optimizer_state);
    }

    TEST_CASE(
        "categories: checkpointing's dynamo wrappers are not compiled graphs / autocast keeps weight copies only") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // The checkpointed capture carries torch/_compile.py inner and _dynamo/eval_frame.py _fn
        // frames in a repository that never calls torch.compile.
        for (const char* name : {"a0kuma-ckpt_checkpointed.pickle", "a0kuma-ckpt_plain.pickle"}) {
            CAPTURE(std::string(name));
            const auto info = test::describe(real(name), test::all_sites());
            CHECK(info.categories[static_cast<std::size_t>(Category::compiled_graph)].bytes == 0);
            for (const auto& s : info.top_sites) CHECK_FALSE(s.site.compiled_graph);
        }
        // autocast: a cast is a weight copy only when a live parameter asks twice its bytes.
        test::ModelMaker m;
        const auto weight = m.stack({{"/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", 1160, "to"},
                                     {"/home/u/proj/train.py", 31, "main"}});
        const auto cast =
            m.stack({{"??", 0, "at::autocast::cached_cast(...)"}, {"/home/u/proj/model.py", 20, "forward"}});
        m.segment(0, 0x10000000, {{4 * 1024 * 1024, weight}});
        analysis::StackIndex casts({&m.model()}, {}, {});
        REQUIRE(casts.category(0, weight) == Category::parameter);
        CHECK(casts.category(0, cast, 2 * 1024 * 1024) == Category::autocast_cache);
        CHECK(casts.category(0, cast, 2 * 1024 * 1024 + 4096) == Category::activation);
        CHECK(casts.category(0, cast, 128 << 20) == Category::activation);
        // Crafted sizes at the edge of 64 bits: no window around them overflows.
        CHECK(casts.category(0, cast, std::numeric_limits<std::int64_t>::max()) == Category::activation);
        const auto engine = m.stack({{"??", 0, "torch::autograd::Engine::evaluate_function(...)"}});
        analysis::StackIndex grads({&m.model()}, {}, {});
        CHECK(grads.category(0, engine, 4 * 1024 * 1024) == Category::gradient);  // its leaf's size
        CHECK(grads.category(0, engine, 64 << 20) == Category::autograd_detail);
        CHECK(grads.category(0, engine, std::numeric_limits<std::int64_t>::max()) == Category::autograd_detail);
        // cuBLAS's default workspace under a forward: told by its size where no C++ frame names it.
        constexpr std::int64_t workspace = 8'519'680;
        const auto python_forward = m.stack({{"/home/u/proj/model.py", 40, "forward"}});
        const auto cpp_forward = m.stack({{"??", 0, "at::native::mm(...)"}, {"/home/u/proj/model.py", 40, "forward"}});
        analysis::StackIndex sized({&m.model()}, {}, {});
        CHECK(sized.category(0, python_forward, workspace) == Category::workspace);
        CHECK(sized.category(0, python_forward, workspace + 512) == Category::activation);
        CHECK(sized.category(0, cpp_forward, workspace) == Category::activation);
        const auto yiyi = test::describe(real("yiyi-llm-inference_opt1.3b_torch2.0.pickle"), test::all_sites());
        CHECK(yiyi.categories[static_cast<std::size_t>(Category::workspace)].bytes == workspace);
        CHECK(yiyi.categories[static_cast<std::size_t>(Category::activation)].bytes == 0);
    }

    TEST_CASE("two runs of one script: same addresses and stacks prove nothing / behaviour only with the caveat") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        int tested = 0;
        for (const auto& name : real_with_stacks()) {
            CAPTURE(name);
            const auto first = real(name);
            if (!test::has_timed_trace(first)) continue;
            // A fresh run: every block at the same address with the same stack, its clock later.
            const auto second = test::make_variant(first, {nullptr, 0, 7'200'000'000, std::nullopt});
            const auto d = analysis::diff_snapshots(first, second, test::with_steps(100, 500));
            CHECK(d.comparability.same_process == Answer::unknown);
            CHECK(d.verdict == Verdict::stable);
            const auto stack = user_stack(second);
            if (!stack) continue;
            auto grown = second;
            test::inject_blocks(grown, *stack, kLeakSize, kLeakCount);
            const auto g = analysis::diff_snapshots(first, grown, test::with_steps(100, 500));
            CHECK(g.comparability.same_process == Answer::unknown);
            if (g.comparability.behaviour_allowed()) {
                // The same sites, in a known order: judged, and every report says on what.
                CHECK(g.comparability.caveat());
                REQUIRE_FALSE(g.advice.empty());
                CHECK(g.advice.front() == Advice::caveat_same_workload);
                CHECK(std::any_of(g.notes.begin(), g.notes.end(), [](const analysis::Fact& f) {
                    return f.kind == analysis::FactKind::caveat_same_workload;
                }));
            } else {
                check_no_false_leak(g);
            }
            ++tested;
        }
        CHECK(tested >= 3);
    }

    TEST_CASE("project roots nested in one another are one checkout") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto before = real("nothanmin-a2_train_step.pickle");
        const auto root = root_of(before);
        REQUIRE_FALSE(root.empty());
        // The second capture's user frames all lie one folder deeper: its root is nested.
        auto deeper = [root](std::string_view name) {
            std::string s(name);
            if (s.starts_with(root)) return root + "src/" + s.substr(root.size());
            return s;
        };
        const auto after = test::make_variant(before, {deeper, 0, 0, std::nullopt});
        const auto d = analysis::diff_snapshots(before, after, test::with_steps(100, 500));
        for (const auto& f : d.comparability.process_evidence) CHECK(f.kind != analysis::FactKind::roots_differ);
    }

    TEST_CASE("a capture on cuda:1 only: trace replays device 1 / a series across devices is levels") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto zero = real("silmont2000-a2_forward_fp32.pickle");
        const auto one = test::make_variant(zero, {nullptr, 0, 0, 1});
        const auto t = analysis::analyze_trace(one, test::all_sites());
        CHECK(t.device == 1);
        CHECK(t.peak.bytes == analysis::analyze_trace(zero, test::all_sites()).peak.bytes);
        CHECK(t.peak.bytes > 0);
        // Three captures of a run whose first is on cuda:1: not one process, levels only.
        std::vector<analysis::SeriesCapture> series;
        auto every = test::all_sites();
        series.push_back({"run_step100.pickle", analysis::describe_snapshot(one, every)});
        for (const int step : {200, 300}) {
            auto later = zero;
            if (const auto stack = user_stack(later)) test::inject_blocks(later, *stack, kLeakSize, step / 10);
            series.push_back({fmt::format("run_step{}.pickle", step), analysis::describe_snapshot(later, every)});
        }
        const auto trend = analysis::trend_snapshots(series, every, {});
        CHECK(trend.comparability.same_process == Answer::no);
        CHECK_FALSE(analysis::is_behaviour(trend.verdict));
        CHECK(std::any_of(trend.warnings.begin(), trend.warnings.end(),
                          [](const analysis::Fact& f) { return f.kind == analysis::FactKind::devices_differ; }));
        analysis::Gates leak_gate;
        leak_gate.leak = true;
        const auto gate = analysis::check_gates(trend, leak_gate);
        REQUIRE(gate.has_value());
        CHECK_FALSE(gate->tripped);  // not judged: said, exit 0
    }

    TEST_CASE("partial summary tables diff on what both hold and name the rest") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // Only the Allocated rows, as people paste them into a README.
        const auto allocated_only = [](const std::string& text) {
            std::istringstream in(text);
            std::string out, line;
            bool keep = true;
            while (std::getline(in, line)) {
                const bool row = line.starts_with("| ") && line.find(" | ") != std::string::npos &&
                                 line.find("Metric") == std::string::npos && line.find("OOMs") == std::string::npos;
                if (row && line.find("from ") == std::string::npos)
                    keep = line.find("Allocated memory") != std::string::npos;
                if (!row || keep) out += line + "\n";
            }
            return out;
        };
        const auto dir = test::real_dir() / "summaries";
        const auto before = stats::read_stats_text(
            allocated_only(test::read_text(dir / "gpt-neo-generation_pair_before.txt")), "before.txt");
        const auto after = stats::read_stats_text(
            allocated_only(test::read_text(dir / "gpt-neo-generation_pair_after.txt")), "after.txt");
        REQUIRE(before.tables.size() == 1);
        CHECK_FALSE(before.tables[0].stats.count("reserved_bytes.all.current"));
        const auto d = test::stats_diff(before, after);
        const auto& p = d.primary();
        CHECK(p.verdict == Verdict::stable);  // +8 MiB on 5 GiB: within the noise floor
        CHECK(std::find(p.missing.begin(), p.missing.end(), "reserved_bytes.all.current") != p.missing.end());
        CHECK(test::render(d).find("not in both tables, so not judged: reserved_bytes.all.current") !=
              std::string::npos);

        // Training over: allocated went from 5114 MiB to 0 B. Allocated alone says shrink.
        std::string emptied = allocated_only(test::read_text(dir / "gpt-neo-generation_pair_before.txt"));
        const auto row = emptied.find("| Allocated memory      |   5114 MiB |");
        REQUIRE(row != std::string::npos);
        emptied.replace(row, 36, "| Allocated memory      |      0 B   |");
        const auto shrink = test::stats_diff(before, stats::read_stats_text(emptied, "after.txt"));
        CHECK(shrink.primary().verdict == Verdict::shrink);
        // Two files show no one run: the fall is a level, not memory freed over time.
        CHECK(shrink.primary().advice == std::vector<Advice>{Advice::shrink_levels});
    }

    TEST_CASE("fresh-eyes findings: cache growth between two programs while live memory fell is not called the same") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // fp32 forward, then the tiny program: less live memory, more reserved.
        const auto d = analysis::diff_snapshots(real("silmont2000-a2_forward_fp32.pickle"),
                                                real("silmont2000-a2_tiny.pickle"), {});
        CHECK(d.verdict == Verdict::cache_growth);
        CHECK_FALSE(analysis::is_behaviour(d.verdict));
        CHECK(d.totals.allocated.delta < -(std::int64_t{400} << 20));
        CHECK(d.totals.reserved.delta > 0);
        CHECK(d.advice == std::vector<Advice>{Advice::cache_levels_live_lower});
        CHECK(test::render(d).find("Live memory is the same") == std::string::npos);
    }

    TEST_CASE("fresh-eyes findings: a clock that runs backwards takes the order and not the process") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto fp32 = real("silmont2000-a2_forward_fp32.pickle");
        const auto bf16 = real("silmont2000-a2_forward_bf16.pickle");
        const auto has_kind = [](const analysis::Facts& facts, analysis::FactKind kind) {
            return std::any_of(facts.begin(), facts.end(), [&](const analysis::Fact& f) { return f.kind == kind; });
        };
        // fp32 was captured after bf16: given first, its clock runs backwards into bf16's.
        const auto reversed = analysis::diff_snapshots(fp32, bf16, {});
        const auto given = analysis::diff_snapshots(bf16, fp32, {});
        // Whether they are one process cannot depend on the order they are given in.
        CHECK(reversed.comparability.same_process == given.comparability.same_process);
        CHECK(reversed.comparability.same_process == Answer::unknown);
        CHECK_FALSE(reversed.comparability.order_known);
        CHECK(has_kind(reversed.comparability.order_evidence, analysis::FactKind::trace_order_reversed));
        CHECK(given.comparability.order_known);
        CHECK(test::render(reversed).find("swap them") != std::string::npos);
        for (const auto* d : {&reversed, &given}) {
            CHECK_FALSE(analysis::is_behaviour(d->verdict));
            // Separate runs: their caches differ by another high-water mark, not by growth.
            for (const auto a : d->advice)
                CHECK((a != Advice::cache_not_leak && a != Advice::cache_fix && a != Advice::shrink_nothing) == true);
            CHECK(d->overall.empty());
        }
        // In no known order the two are a set: their levels differ, and nothing grew or shrank.
        CHECK(reversed.verdict == Verdict::differs);
        // Live memory is the same in both (allocated flat): they differ in cache, which the advice says.
        CHECK(reversed.advice == std::vector<Advice>{Advice::cache_levels, Advice::order_contradicted});
        for (const auto& s : reversed.sites) CHECK((s.verdict == Verdict::differs || s.verdict == Verdict::stable));
        CHECK(given.advice == std::vector<Advice>{Advice::shrink_levels});
    }

    TEST_CASE("fresh-eyes findings: device indices of two programs are not judged device by device") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // cuda:1 of one program against cuda:0 of another.
        const auto d = analysis::diff_snapshots(real("muduard-layoutediting_segment_list.pkl"),
                                                real("yiyi-llm-inference_opt1.3b_torch2.0.pickle"), {});
        CHECK(d.comparability.same_process == Answer::no);
        for (const auto& f : d.evidence) {
            CHECK(f.kind != analysis::FactKind::device_verdict);
            CHECK(f.kind != analysis::FactKind::sites_stay);  // a leak's shape without a leak's grounds
        }
        for (const auto& s : d.sites) CHECK_FALSE(s.share.has_value());  // a level is no growth to share
        const auto text = test::render(d);
        CHECK(text.find("survivors") == std::string::npos);  // blocks are not followed between programs
        CHECK(text.find("Verdict: GROWTH  allocated +494.82 MiB, reserved +2.80 GiB\n") != std::string::npos);
    }

    TEST_CASE("fresh-eyes findings: a free's stack is not an allocation site") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // The ring buffer lost the allocations of last step's gradients; zero_grad's frees of them
        // remain, with the stack of the free (benchmarking_script.py:105 -> Optimizer.zero_grad).
        analysis::AnalysisOptions options;
        options.top = 0;
        const auto t = analysis::analyze_trace(real("nothanmin-a2_train_step.pickle"), options, {});
        for (const auto& s : t.peak.usage.sites) {
            CAPTURE(s.site.label());
            CHECK(s.site.label().find("benchmarking_script.py:105") == std::string::npos);
        }
        const auto optimizer = t.peak.usage.category_bytes[static_cast<std::size_t>(Category::optimizer_state)];
        CHECK(optimizer < std::int64_t{8} * 1024 * 1024 * 1024);  // the two Adam moments, 7.43 GiB
    }

    TEST_CASE("fresh-eyes findings: ranks name the rank that ran out of memory and need five for a spread") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto snap = real("constructor-sun-gnn_3dev_expandable_oom.pickle");
        const auto r = analysis::compare_ranks(analysis::devices_as_ranks(snap, "gnn.pickle", {}), {});
        REQUIRE(r.ranks.size() == 3);
        // Three ranks: the allocator's floor, not three deviations wider than the data.
        CHECK(r.noise_bytes == analysis::noise_threshold(ByteRange::exact(r.median.allocated_bytes)));
        const auto oom = std::find_if(r.warnings.begin(), r.warnings.end(),
                                      [](const analysis::Fact& f) { return f.kind == analysis::FactKind::rank_ooms; });
        REQUIRE(oom != r.warnings.end());
        CHECK(oom->integer("device") == 1);
        // DataParallel replicas: each device holds the 240 MiB copy of the weights; the primary
        // (device 0) holds more beside it, never less.
        CHECK(r.same_workload == Answer::yes);
        // Device 1 is judged by what it held when it ran out: 78.29 GiB, far above the median.
        const auto one = std::find_if(r.outliers.begin(), r.outliers.end(), [](const auto& o) { return o.rank == 1; });
        REQUIRE(one != r.outliers.end());
        CHECK(one->verdict == Verdict::growth);
        REQUIRE(one->oom_moment);
        CHECK(one->allocated_bytes == one->oom_moment->allocated_bytes);
        CHECK(one->snapshot_allocated_bytes < r.median.allocated_bytes);
        // Its cache is what the OOM left: said beside the verdict, and counted in JSON.
        CHECK(one->ooms == 1);
        for (const auto& o : r.outliers)
            if (o.rank != 1) CHECK(o.ooms == 0);
        // The report says so first, before any rank's levels, and that its levels came after.
        const auto text = report::render(r, report::Format::text, {});
        const auto verdict_line = text.find("#1    GROWTH");
        REQUIRE(verdict_line != std::string::npos);
        CHECK(text.find("ran out of memory", verdict_line) != std::string::npos);
        CHECK(text.find("these levels and sites are what it held at its out-of-memory error", verdict_line) !=
              std::string::npos);
        // Without that moment (no trace to replay it from), the snapshot's levels are all there
        // is: less live memory but a cache of 78 GiB against a median of 20 is no shrink, and
        // the levels are said to be what the error left.
        auto without_moment = analysis::devices_as_ranks(snap, "gnn.pickle", {});
        for (auto& c : without_moment) c.oom_moment.reset();
        const auto left = analysis::compare_ranks(std::move(without_moment), {});
        const auto left_one =
            std::find_if(left.outliers.begin(), left.outliers.end(), [](const auto& o) { return o.rank == 1; });
        REQUIRE(left_one != left.outliers.end());
        CHECK(left_one->verdict == Verdict::cache_growth);
        const auto left_text = report::render(left, report::Format::text, {});
        CHECK(left_text.find("these levels are what its out-of-memory error left, not what filled the device: memsnap "
                             "trace --device 1 shows that moment") != std::string::npos);
        const auto json = nlohmann::json::parse(report::render(r, report::Format::json, {}));
        for (const auto& o : json.at("outliers")) CHECK(o.at("ooms") == (o.at("rank") == 1 ? 1 : 0));
        const auto said = text.find("Out of memory\n  - rank 1 (device 1) ran out of memory");
        REQUIRE(said != std::string::npos);
        CHECK(said < text.find("Per rank"));
        CHECK(text.find("its snapshot was taken after") != std::string::npos);
    }

    TEST_CASE("review 8: an optimizer step's temporaries at a trace's peak are temporary and not optimizer_state") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto path = [](const char* name) { return test::quote(test::real_dir() / "snapshots" / name); };
        // Counted here from the trace itself: an allocation live at the peak whose stack runs
        // through torch/optim/optimizer.py's step wrapper, freed before the next allocation
        // whose stack does not, after the last such allocation before the peak.
        for (const char* name : {"bcrafton-a2_compiled_benchmark.pickle", "wedsonlin-a2_medium128_training.pickle",
                                 "nothanmin-a2_train_step.pickle"}) {
            CAPTURE(name);
            const auto snap = real(name);
            const auto in_step = [&](snapshot::StackId stack) {
                for (const auto f : snap.stacks.frames(stack))
                    if (snap.strings.view(snap.frames[f].filename).ends_with("torch/optim/optimizer.py")) return true;
                return false;
            };
            const auto run = test::run_memsnap("trace --format json " + path(name));
            REQUIRE(run.exit_code == 0);
            const auto traced = nlohmann::json::parse(run.out);
            const auto peak = traced.at("peak").at("event").get<std::size_t>();
            std::vector<snapshot::TraceEvent> events;
            for (const auto e : snap.events)
                if (e.device == 0) events.push_back(e);
            REQUIRE(peak <= events.size());
            std::size_t step_begin = peak, step_end = peak;
            while (step_begin > 0 && !(events[step_begin - 1].action() == snapshot::TraceAction::alloc &&
                                       !in_step(events[step_begin - 1].stack)))
                --step_begin;
            while (step_end < events.size() &&
                   !(events[step_end].action() == snapshot::TraceAction::alloc && !in_step(events[step_end].stack)))
                ++step_end;
            std::map<std::int64_t, std::int64_t> made;  // address -> bytes, made in the step before the peak
            for (std::size_t i = step_begin; i < peak; ++i) {
                const auto e = events[i];
                if (e.action() == snapshot::TraceAction::alloc && in_step(e.stack))
                    made[e.addr] = (e.size + 511) / 512 * 512;
                if (e.action() == snapshot::TraceAction::free_completed) made.erase(e.addr);
            }
            std::int64_t temporary = 0;
            for (std::size_t i = peak; i < step_end; ++i)
                if (const auto e = events[i]; e.action() == snapshot::TraceAction::free_completed)
                    if (const auto at = made.find(e.addr); at != made.end()) {
                        temporary += at->second;
                        made.erase(at);
                    }
            CHECK(traced.at("peak").at("categories").at("temporary") == temporary);
            // A diff's one-pass peak says the same.
            const auto diffed = test::run_memsnap("diff --format json " + path(name) + " " + path(name));
            const auto diff_json = nlohmann::json::parse(diffed.out);
            CHECK(diff_json.at("peaks").at("after").at("categories").at("temporary") == temporary);
            for (const auto& site : traced.at("peak").at("sites"))
                if (site.at("category") == "temporary") CHECK(site.at("frame").at("name") == "step");
        }
        // In no known order (fp32 against bf16: the second's trace ends before the first's
        // begins), no site is "first seen" anywhere, though JSON keeps first_step.
        const auto unordered =
            test::run_memsnap("trend --steps 1,2,3 " + path("silmont2000-a2_forward_fp32.pickle") + " " +
                              path("silmont2000-a2_forward_bf16.pickle") + " " + path("silmont2000-a2_tiny.pickle"));
        REQUIRE(unordered.exit_code == 0);
        CHECK(unordered.out.find("in no known order") != std::string::npos);
        CHECK(unordered.out.find("first seen") == std::string::npos);
        // Two of them hold some: the update terms of the user's AdamW (optimizer.py:78, :80).
        const auto bcrafton = nlohmann::json::parse(
            test::run_memsnap("trace --format json " + path("bcrafton-a2_compiled_benchmark.pickle")).out);
        CHECK(bcrafton.at("peak").at("categories").at("temporary") == 463168512);
        // The state it keeps (exp_avg, exp_avg_sq: lines 74 and 75) is still optimizer_state.
        for (const auto& site : bcrafton.at("peak").at("sites"))
            if (site.at("frame").at("line") == 74 || site.at("frame").at("line") == 75)
                CHECK(site.at("category") == "optimizer_state");
    }

    TEST_CASE("fresh-eyes findings 7: one side without stacks / peaks of other devices / blocks larger than asked") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto snapshots = test::real_dir() / "snapshots";
        const auto path = [&](const char* name) { return test::quote(snapshots / name); };
        const auto diff_json = [&](const char* a, const char* b) {
            const auto run = test::run_memsnap("diff --format json " + path(a) + " " + path(b));
            REQUIRE(run.exit_code == 0);
            return nlohmann::json::parse(run.out);
        };
        const auto one_side = [](const nlohmann::json& j) -> std::string {
            for (const auto& f : j.at("headline"))
                if (f.at("fact") == "stacks_one_side") return f.at("side");
            return "";
        };
        // A capture that records no stacks beside one that does: said first, for the side
        // without, as the site and category tables set attributed memory against it.
        const char* stacked = "kkaitlyn111-a2_ctx128_forward.pickle";
        const char* bare = "kkaitlyn111-a2_segments_no_frames.pickle";
        const auto forward = diff_json(stacked, bare);
        CHECK(forward.at("stacks_recorded_before") == true);
        CHECK(forward.at("stacks_recorded_after") == false);
        CHECK(one_side(forward) == "second");
        CHECK(one_side(diff_json(bare, stacked)) == "first");
        CHECK(one_side(diff_json(stacked, "kkaitlyn111-a2_small_forward_compiled.pickle")).empty());
        // A capture whose live blocks predate recording (its trace has stacks) is told so, and
        // an empty capture has no memory to attribute.
        const auto before_recording =
            diff_json("wedsonlin-a2_medium128_inference.pickle", "wedsonlin-a2_medium128_training.pickle");
        REQUIRE(one_side(before_recording) == "first");
        for (const auto& f : before_recording.at("headline"))
            if (f.at("fact") == "stacks_one_side") {
                CHECK(f.at("trace_stacks").get<std::int64_t>() > 0);
                CHECK(f.at("text").get<std::string>().find("made before recording started") != std::string::npos);
            }
        for (const auto& f : forward.at("headline"))
            if (f.at("fact") == "stacks_one_side") CHECK(f.at("trace_stacks") == 0);
        CHECK(one_side(diff_json("angelolmn-hitsbe_empty.pickle", "silmont2000-a2_tiny.pickle")).empty());
        // Neither records stacks (grouped by size alone, said in the notes): no side to name.
        const auto neither = diff_json("silmont2000-a2_forward_fp32.pickle", "silmont2000-a2_forward_bf16.pickle");
        CHECK(neither.at("stacks_recorded") == false);
        CHECK(one_side(neither).empty());

        // So does a trend, of the captures without.
        const auto trend = test::run_memsnap("trend --format json --steps 100,200,300 " +
                                             path("kkaitlyn111-a2_small_forward_compiled.pickle") + " " +
                                             path(stacked) + " " + path(bare));
        REQUIRE(trend.exit_code == 0);
        const auto series = nlohmann::json::parse(trend.out);
        REQUIRE_FALSE(series.at("notes").empty());
        const auto& first_note = series.at("notes").at(0);
        CHECK(first_note.at("fact") == "stacks_some_captures");
        CHECK(first_note.at("captures") == 1);
        CHECK(first_note.at("of") == 3);
        CHECK(first_note.at("files").get<std::string>().find(bare) != std::string::npos);

        // Peaks of different devices are named so.
        const auto devices =
            diff_json("maphsge4-select-n_llama_4dev.pickle", "constructor-sun-gnn_3dev_expandable_oom.pickle");
        bool peak_named = false;
        for (const auto& f : devices.at("headline"))
            if (f.at("fact") == "peak_higher") {
                peak_named = true;
                CHECK(f.at("device") == 1);
                CHECK(f.at("other_device") == 0);
                CHECK(f.at("text").get<std::string>().find("the peaks are of different devices") != std::string::npos);
            }
        CHECK(peak_named);

        // A pool's reserved bytes are its allocated, pending-free and free blocks (segments that
        // are not expandable map all of their bytes), on every real capture.
        for (const auto& file : test::files_in(snapshots, ".pickle")) {
            CAPTURE(file.filename().string());
            const auto info = analysis::describe_snapshot(snapshot::load_snapshot(file.string()), {});
            for (const auto& pool : info.pools)
                if (pool.expandable_segments == 0)
                    CHECK(pool.reserved_bytes == pool.allocated_bytes + pool.pending_free_bytes + pool.free_bytes);
        }
        CHECK(test::run_memsnap("info " + path("verl-megatron-vllm_pending_free.pickle"))
                  .out.find("reserved   allocated  pending free        free") != std::string::npos);

        // An OOM's time counts from the first event of the traces read: one device's with --device.
        const auto oom_capture = path("constructor-sun-gnn_3dev_expandable_oom.pickle");
        CHECK(test::run_memsnap("info --device 1 " + oom_capture)
                  .out.find("1.451 s after device 1's first trace event") != std::string::npos);
        CHECK(test::run_memsnap("info " + oom_capture).out.find("2.734 s after the first trace event of any device") !=
              std::string::npos);

        // The rank that ran out of memory comes first among the outliers, whatever its level.
        const auto ranks =
            test::run_memsnap("ranks --format json " + path("constructor-sun-gnn_3dev_expandable_oom.pickle"));
        REQUIRE(ranks.exit_code == 0);
        const auto outliers = nlohmann::json::parse(ranks.out).at("outliers");
        REQUIRE(outliers.size() >= 2);
        CHECK(outliers.at(0).at("rank") == 1);
        CHECK(outliers.at(0).at("ooms") == 1);
        // It is judged by what it held when it ran out (its snapshot holds what the error left):
        // the moment trace --device 1 explains, its allocated bytes and its largest site.
        const auto oom_traced = test::run_memsnap("trace --format json --device 1 " + oom_capture);
        REQUIRE(oom_traced.exit_code == 0);
        const auto trace_json = nlohmann::json::parse(oom_traced.out);
        const auto& oom = trace_json.at("ooms").at(0);
        const auto& at_oom = outliers.at(0);
        CHECK(at_oom.at("levels_at") == "oom");
        CHECK(at_oom.at("oom_event") == oom.at("event"));
        CHECK(at_oom.at("oom_time_us") == oom.at("time_us"));
        CHECK(at_oom.at("allocated_bytes") == oom.at("allocated_bytes"));
        CHECK(at_oom.at("verdict") == "growth");
        const auto ranks_json = nlohmann::json::parse(ranks.out);
        const auto median = ranks_json.at("median").at("allocated_bytes").get<std::int64_t>();
        CHECK(at_oom.at("delta_bytes").get<std::int64_t>() == oom.at("allocated_bytes").get<std::int64_t>() - median);
        for (const auto& row : ranks_json.at("ranks"))
            if (row.at("rank") == 1)
                CHECK(at_oom.at("snapshot_allocated_bytes") == row.at("totals").at("allocated_bytes"));
        const auto& top_site = oom.at("sites").at(0);
        CHECK(at_oom.at("sites").at(0).at("bytes") == top_site.at("bytes"));
        CHECK(at_oom.at("sites").at(0).at("frame") == top_site.at("frame"));
        // Ranks that did not run out keep their snapshot's levels.
        for (const auto& other : outliers)
            if (other.at("rank") != 1) {
                CHECK(other.at("levels_at") == "snapshot");
                CHECK(other.at("oom_event").is_null());
                CHECK(other.at("allocated_bytes") == other.at("snapshot_allocated_bytes"));
            }
        const auto ranks_text = test::run_memsnap("ranks " + oom_capture).out;
        CHECK(ranks_text.find("holding 78.29 GiB allocated at the last") != std::string::npos);
        CHECK(ranks_text.find("these levels and sites are what it held at its out-of-memory error, 1.451 s after "
                              "device 1's trace's first event") != std::string::npos);

        // Traced allocations live at the end in blocks larger than their request rounded to 512
        // bytes, counted from the capture itself: the trace says how many, and what that means.
        for (const char* name : {"nothanmin-a2_train_step.pickle", "wedsonlin-a2_medium128_training.pickle",
                                 "silmont2000-a2_forward_fp32.pickle"}) {
            CAPTURE(name);
            const auto snap = real(name);
            std::map<std::int64_t, std::int64_t> requested;  // address -> its last alloc's request, while live
            for (const auto e : snap.events) {
                if (e.device != 0) continue;
                if (e.action() == snapshot::TraceAction::alloc) requested[e.addr] = e.size;
                if (e.action() == snapshot::TraceAction::free_completed) requested.erase(e.addr);
            }
            std::int64_t larger = 0, by = 0;
            for (const auto& seg : snap.segments)
                if (seg.device == 0)
                    for (const auto& b : snap.blocks_of(seg)) {
                        const auto at = requested.find(b.address);
                        if (!b.active() || at == requested.end()) continue;
                        const std::int64_t rounded = (at->second + 511) / 512 * 512;
                        if (b.size > rounded) ++larger, by += b.size - rounded;
                    }
            const auto run = test::run_memsnap("trace --format json " + path(name));
            REQUIRE(run.exit_code == 0);
            const auto traced = nlohmann::json::parse(run.out);
            std::int64_t said = 0, said_bytes = 0;
            for (const auto& f : traced.at("notes"))
                if (f.at("fact") == "larger_blocks") {
                    said = f.at("allocations");
                    said_bytes = f.at("bytes");
                }
            CHECK(said == larger);
            CHECK(said_bytes == by);
        }
    }

    TEST_CASE("fresh-eyes findings: cudaMallocAsync's untracked zeros are no values") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto dir = test::real_dir() / "summaries";
        const auto async_name = "comfyui-docker-log_torch2.8_cudaMallocAsync.txt";
        const auto async = stats::read_stats_text(test::read_text(dir / async_name), async_name);
        REQUIRE(async.tables.size() == 1);
        // The reader keeps every cell as printed; what is judged by leaves the untracked zeros out.
        const auto& table = async.tables[0];
        CHECK(stats::tracked_value(table, "allocated_bytes.all.current") != nullptr);
        for (const char* untracked : {"allocation.all.current", "active.all.current", "requested_bytes.all.current",
                                      "inactive_split_bytes.all.current", "segment.all.current"}) {
            CAPTURE(untracked);
            CHECK(table.stats.count(untracked) == 1);
            CHECK(stats::tracked_value(table, untracked) == nullptr);
        }
        // The backend is chosen when a process starts: two backends are two runs.
        const auto native_name = "sglang-serving_torch2x_full.txt";
        const auto native = stats::read_stats_text(test::read_text(dir / native_name), native_name);
        const auto d = test::stats_diff(async, native);
        CHECK(d.comparability.same_process == Answer::no);
        // A counter that runs backwards: "counters grow" is not said beside it.
        const auto notes_name = "memory-notes_torch1.9_old-units.txt";
        const auto notes = stats::read_stats_text(test::read_text(dir / notes_name), notes_name);
        const auto backwards = test::stats_diff(notes, native);
        // torch <= 1.9 against torch 2.x: two runs, so two counters that say nothing of the order.
        CHECK(backwards.comparability.same_process == Answer::no);
        CHECK_FALSE(backwards.comparability.order_contradicted());
        for (const auto& f : backwards.comparability.process_evidence)
            CHECK(f.kind != analysis::FactKind::counters_grow);
        // Compared as levels, shape growth names no fix.
        for (const auto a : backwards.primary().advice) CHECK(a != Advice::shape_bucket);
        for (const auto& f : d.primary().evidence) CHECK(f.kind != analysis::FactKind::live_blocks_change);
        // One process runs one torch: tables laid out by torch 1.10-1.13 and by torch <= 1.9 are two.
        const auto old_name = "gravitorch-docstring_torch1.13_indented.txt";
        const auto older = stats::read_stats_text(test::read_text(dir / old_name), old_name);
        const auto versions = test::stats_diff(older, notes);
        CHECK(versions.comparability.same_process == Answer::no);
        const auto& evidence = versions.comparability.process_evidence;
        const auto named = std::find_if(evidence.begin(), evidence.end(), [](const analysis::Fact& f) {
            return f.kind == analysis::FactKind::versions_differ;
        });
        REQUIRE(named != evidence.end());
        CHECK(named->word("before") == "torch1.10-1.13");
        CHECK(named->word("after") == "torch<=1.9");
        // A trend over the six summaries says the same of its neighbours (two backends, two versions).
        const auto trend = test::run_memsnap("trend --format json " + test::quote(dir.string()));
        REQUIRE(trend.exit_code == 0);
        CHECK(nlohmann::json::parse(trend.out).at("comparability").at("same_process") == "no");
    }

    TEST_CASE("fresh-eyes findings: gates and outliers need their grounds") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        auto every = test::all_sites();
        std::vector<analysis::SeriesCapture> series;
        std::vector<analysis::RankCapture> ranks;
        for (const char* name : {"silmont2000-a2_forward_fp32.pickle", "silmont2000-a2_forward_bf16.pickle",
                                 "silmont2000-a2_tiny.pickle"}) {
            series.push_back({name, analysis::describe_snapshot(real(name), every)});
            ranks.push_back(
                {std::nullopt, name, analysis::describe_snapshot(real(name), every), std::nullopt, std::nullopt});
        }
        // Three programs in no known order: no slope, so --fail-on-growth is not judged.
        const auto trend = analysis::trend_snapshots(series, every, {});
        REQUIRE_FALSE(trend.comparability.order_known);
        analysis::Gates growth;
        growth.growth_per_step = 1;
        const auto gate = analysis::check_gates(trend, growth);
        REQUIRE(gate.has_value());
        CHECK_FALSE(gate->tripped);
        // With both gates, each says it was not judged: the growth gate is not lost.
        auto both = growth;
        both.leak = true;
        const auto two = analysis::check_gates(trend, both);
        REQUIRE(two.has_value());
        CHECK_FALSE(two->tripped);
        CHECK(std::any_of(two->reasons.begin(), two->reasons.end(), [](const auto& f) { return f.is("growth"); }));
        CHECK(std::any_of(two->reasons.begin(), two->reasons.end(), [](const auto& f) { return !f.is("growth"); }));
        // Not shown to be replicas: no rank is called an outlier.
        const auto r = analysis::compare_ranks(std::move(ranks), every);
        CHECK(r.same_workload != Answer::yes);
        CHECK(r.outliers.empty());
        // DataParallel's copies of the weights on device 1 are parameters, not activations.
        auto device1 = every;
        device1.device = 1;
        const auto gnn = analysis::describe_snapshot(real("constructor-sun-gnn_3dev_expandable_oom.pickle"), device1);
        CHECK(gnn.categories[static_cast<std::size_t>(Category::parameter)].bytes >= std::int64_t{240} * 1024 * 1024);
    }

    TEST_CASE("fresh-eyes findings: captures in no known order are a set: their levels differ and nothing grows") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const std::string fp32 = "silmont2000-a2_forward_fp32.pickle", bf16 = "silmont2000-a2_forward_bf16.pickle",
                          tiny = "silmont2000-a2_tiny.pickle";
        const auto verdicts = [](const analysis::TrendResult& t) {
            std::vector<Verdict> out{t.verdict};
            for (const auto* group : {&t.totals, &t.categories})
                for (const auto& s : *group) out.push_back(s.fit.verdict);
            for (const auto& s : t.sites) out.push_back(s.fit.verdict);
            return out;
        };
        // Three programs given in two orders: a set, judged alike, and only as levels that differ.
        const auto given = real_trend({fp32, bf16, tiny});
        const auto reversed = real_trend({tiny, bf16, fp32});
        for (const auto* t : {&given, &reversed}) {
            REQUIRE_FALSE(t->comparability.order_known);
            CHECK(t->verdict == Verdict::differs);
            for (const auto v : verdicts(*t)) CHECK((v == Verdict::differs || v == Verdict::stable) == true);
            // Nothing is given per capture either: no note says growth is.
            for (const auto& f : t->notes) CHECK(f.kind != analysis::FactKind::steps_unknown);
        }
        CHECK(verdicts(given).size() == verdicts(reversed).size());
        // With steps, the same captures are in an order: their levels grow or shrink, never "differ".
        const auto ordered = real_trend({bf16, fp32, tiny}, {100, 200, 300});
        REQUIRE(ordered.comparability.order_known);
        for (const auto v : verdicts(ordered)) CHECK(v != Verdict::differs);
        // bf16, fp32, then tiny: allocated falls as the tiny run's cache (3.5 GiB) rises.
        CHECK(ordered.verdict == Verdict::cache_growth);
        // From the command line over six unrelated summaries: "differs", in text and JSON.
        const auto dir = test::quote((test::real_dir() / "summaries").string());
        const auto text = test::run_memsnap("trend " + dir);
        CHECK(text.exit_code == 0);
        CHECK(text.out.find("Verdict: DIFFERS") != std::string::npos);
        CHECK(text.out.find("GROWTH") == std::string::npos);
        CHECK(text.out.find("compared as levels; no leak") != std::string::npos);
        CHECK(text.out.find("sites matched") == std::string::npos);  // summaries have no sites
        const auto json = test::run_memsnap("trend --format json " + dir);
        REQUIRE(json.exit_code == 0);
        CHECK(nlohmann::json::parse(json.out).at("verdict") == "differs");
    }

    TEST_CASE("fresh-eyes findings: levels in a known order: a spike that came back differs / no steadiness shown") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto t = real_trend({"kkaitlyn111-a2_small_forward_compiled.pickle",
                                   "kkaitlyn111-a2_ctx128_forward.pickle", "kkaitlyn111-a2_segments_no_frames.pickle"},
                                  {100, 200, 300});
        REQUIRE(t.comparability.order_known);
        REQUIRE_FALSE(t.comparability.behaviour_allowed());
        // Activations: none, 5.3 GiB in the second program, none: not "stable".
        const auto activation = std::find_if(t.categories.begin(), t.categories.end(),
                                             [](const analysis::TrendSeries& s) { return s.name == "activation"; });
        REQUIRE(activation != t.categories.end());
        CHECK(activation->bytes.front() == activation->bytes.back());
        CHECK(activation->bytes[1] > std::int64_t{5} << 30);
        CHECK(activation->fit.verdict == Verdict::differs);
        for (const auto& s : t.sites)
            if (s.bytes_by_step.front() == s.bytes_by_step.back() && s.bytes_by_step[1] > (std::int64_t{1} << 30))
                CHECK(s.fit.verdict == Verdict::differs);
        // Three programs compared as levels: a slope, but no R² or share not down, which would
        // read as the steadiness of a leak.
        const auto doc = nlohmann::json::parse(report::render(t, report::Format::json, {}));
        for (const auto& row : doc.at("totals")) {
            CHECK(row.at("r2").is_null());
            CHECK(row.at("monotonic_share").is_null());
            CHECK(row.at("slope_bytes_per_step").is_number());
        }
        const auto text = report::render(t, report::Format::text, {});
        CHECK(text.find("R²") == std::string::npos);
        CHECK(text.find("compared as levels") != std::string::npos);
    }

    TEST_CASE("fresh-eyes findings: live memory freed into non-releasable cache is no growth") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // Reserved stays at 22 MiB; 4 MiB of live blocks freed stays cached in their segments.
        const auto d = analysis::diff_snapshots(real("a0kuma-ckpt_plain.pickle"),
                                                real("a0kuma-ckpt_checkpointed.pickle"), test::all_sites());
        CHECK(d.totals.allocated.delta < -(std::int64_t{3} << 20));
        CHECK(d.totals.reserved.delta == 0);
        CHECK(d.totals.non_releasable.delta > (std::int64_t{3} << 20));
        CHECK(d.verdict == Verdict::shrink);
        CHECK(std::any_of(d.evidence.begin(), d.evidence.end(), [](const analysis::Fact& f) {
            return f.kind == analysis::FactKind::metric_change && f.word("change") == "grows";
        }));
    }

    TEST_CASE("fresh-eyes findings: clocks of runs shown separate say nothing of their order") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto t = real_trend({"wedsonlin-a2_medium128_inference.pickle", "wedsonlin-a2_medium128_training.pickle",
                                   "nothanmin-a2_train_step.pickle"},
                                  {100, 200, 300});
        // Another checkout on another machine, 338 days of clock apart: the steps given stand.
        CHECK(t.comparability.same_process == Answer::no);
        CHECK(t.comparability.order_known);
        for (const auto& f : t.comparability.order_evidence) CHECK(f.kind != analysis::FactKind::trace_order_reversed);
        const auto d =
            analysis::diff_snapshots(real("wedsonlin-a2_medium128_training.pickle"),
                                     real("constructor-sun-gnn_3dev_expandable_oom.pickle"), test::all_sites());
        CHECK(d.comparability.same_process == Answer::no);
        CHECK_FALSE(d.comparability.order_contradicted());
    }

    TEST_CASE("fresh-eyes findings: under several devices the figures of the judged device name it") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto gnn = real("constructor-sun-gnn_3dev_expandable_oom.pickle");
        const auto d = analysis::diff_snapshots(gnn, gnn, {});
        std::size_t figures = 0;
        for (const auto& f : d.evidence)
            if (f.kind == analysis::FactKind::metric_change || f.kind == analysis::FactKind::live_blocks_change) {
                CHECK(f.has("device"));
                ++figures;
            }
        CHECK(figures >= 3);
        const auto text = test::render(d);
        CHECK(text.find("  - device 0 allocated (allocated_bytes.all.current): 7.54 GiB") != std::string::npos);
        CHECK(text.find("  - allocated (") == std::string::npos);
        // One device: the figures are the capture's, named as before.
        const auto one =
            analysis::diff_snapshots(real("silmont2000-a2_tiny.pickle"), real("silmont2000-a2_tiny.pickle"), {});
        for (const auto& f : one.evidence) CHECK_FALSE(f.has("device"));
    }

    TEST_CASE("fresh-eyes findings: two main scripts are two processes / one script and its variants are not") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto has_kind = [](const analysis::Facts& facts, analysis::FactKind kind) {
            return std::any_of(facts.begin(), facts.end(), [&](const analysis::Fact& f) { return f.kind == kind; });
        };
        // no_ckpt.py and t1.py of one checkout: one process runs one __main__.
        const auto d =
            analysis::diff_snapshots(real("a0kuma-ckpt_plain.pickle"), real("a0kuma-ckpt_checkpointed.pickle"), {});
        CHECK(d.comparability.same_process == Answer::no);
        REQUIRE(has_kind(d.comparability.process_evidence, analysis::FactKind::main_scripts_differ));
        CHECK(test::render(d).find("no_ckpt.py before") != std::string::npos);
        // A capture against a copy moved in memory and time keeps its script: no two processes
        // are claimed from it.
        for (const auto& name : real_with_stacks()) {
            CAPTURE(name);
            const auto snap = real(name);
            const auto moved = test::make_variant(snap, {nullptr, std::int64_t{1} << 40, 1'000'000, std::nullopt});
            const auto self = analysis::diff_snapshots(snap, moved, {});
            CHECK_FALSE(has_kind(self.comparability.process_evidence, analysis::FactKind::main_scripts_differ));
        }
        // Main scripts appear in a real capture whose stacks reach `<module>`.
        CHECK(analysis::describe_snapshot(real("a0kuma-ckpt_plain.pickle"), {}).main_script ==
              std::optional<std::string>("/home/andy/playground/ckptTry/cp_t1/no_ckpt.py"));
    }

    TEST_CASE("fresh-eyes findings: autocast copies of weights made before recording are autocast_cache") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // The fp32 weights carry no stack (loaded before recording); their bf16 copies under
        // at::autocast::cached_cast are half their size.
        const auto t = analysis::analyze_trace(real("silmont2000-a2_forward_bf16.pickle"), {}, {});
        const auto bytes = [&](Category c) { return t.peak.usage.category_bytes[static_cast<std::size_t>(c)]; };
        CHECK(bytes(Category::autocast_cache) == 241'852'416);  // 230.65 MiB
        CHECK(bytes(Category::activation) < std::int64_t{16} << 20);
        // The fp32 forward has no cast.
        const auto fp32 = analysis::analyze_trace(real("silmont2000-a2_forward_fp32.pickle"), {}, {});
        CHECK(fp32.peak.usage.category_bytes[static_cast<std::size_t>(Category::autocast_cache)] == 0);
    }

    TEST_CASE("fresh-eyes findings: DataParallel's scatter of the inputs is no activation") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // torch_geometric's DataParallel.scatter collates the batch and moves it to each device.
        const auto info =
            analysis::describe_snapshot(real("constructor-sun-gnn_3dev_expandable_oom.pickle"), test::all_sites());
        bool seen = false;
        for (const auto& s : info.top_sites)
            if (s.site.label().find("trainers.py:444 train") != std::string::npos &&
                s.category != Category::parameter) {
                seen = true;
                CHECK(s.category == Category::unknown);
            }
        CHECK(seen);
    }

    TEST_CASE("fresh-eyes findings: ranks of several checkouts are not one workload") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::vector<analysis::RankCapture> captures;
        for (const char* name : {"nothanmin-a2_train_step.pickle", "wedsonlin-a2_medium128_training.pickle",
                                 "bcrafton-a2_compiled_benchmark.pickle"})
            captures.push_back({std::nullopt, name, analysis::describe_snapshot(real(name), test::all_sites()),
                                std::nullopt, std::nullopt});
        const auto r = analysis::compare_ranks(std::move(captures), {});
        CHECK(r.same_workload == Answer::no);
        CHECK(r.outliers.empty());
    }

    TEST_CASE("fresh-eyes findings: a rank's categories add up to its difference from the median rank") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto snap = real("constructor-sun-gnn_3dev_expandable_oom.pickle");
        const auto r = analysis::compare_ranks(analysis::devices_as_ranks(snap, "gnn.pickle", {}), {});
        REQUIRE_FALSE(r.outliers.empty());
        for (const auto& o : r.outliers) {
            CAPTURE(o.rank);
            std::int64_t sum = 0;
            for (const auto& [category, bytes] : o.categories) sum += bytes;
            CHECK(sum == o.delta_bytes);
        }
        // Device 2 holds no copy of the primary's module: its parameters show below the median rank's.
        const auto two = std::find_if(r.outliers.begin(), r.outliers.end(), [](const auto& o) { return o.rank == 2; });
        REQUIRE(two != r.outliers.end());
        CHECK(std::any_of(two->categories.begin(), two->categories.end(),
                          [](const auto& c) { return c.first == Category::parameter && c.second < 0; }));
    }

    TEST_CASE("fresh-eyes findings: far fewer allocations holding more bytes are no shape growth") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto dir = test::real_dir() / "summaries";
        const auto d = test::stats_diff(
            stats::read_stats_text(test::read_text(dir / "memory-notes_torch1.9_old-units.txt"), "before.txt"),
            stats::read_stats_text(test::read_text(dir / "sglang-serving_torch2x_full.txt"), "after.txt"));
        // 595 live allocations to 21, allocated up 37 MiB: other allocations, not the same grown.
        CHECK(d.primary().verdict == Verdict::growth);
    }

    TEST_CASE("fresh-eyes findings: backward's gradients of activations are autograd_detail / leaf gradients stay") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto peak_bytes = [](const analysis::TraceResult& t, Category c) {
            return t.peak.usage.category_bytes[static_cast<std::size_t>(c)];
        };
        // Attention backward (BmmBackward0, DivBackward0) on 2 MiB leaves: its 512 MiB buffers are
        // gradients of activations; the leaves' own gradients are 2 MiB.
        const auto tiny = analysis::analyze_trace(real("silmont2000-a2_tiny.pickle"), {}, {});
        CHECK(peak_bytes(tiny, Category::autograd_detail) > std::int64_t{2} << 30);
        // (block sizes: rounded up to 512 bytes)
        CHECK(peak_bytes(tiny, Category::gradient) == doctest::Approx(std::int64_t{2} << 20).epsilon(0.001));
        // A model's parameter gradients are its parameters' sizes: as many bytes as the parameters.
        for (const char* name : {"a0kuma-ckpt_plain.pickle", "a0kuma-ckpt_checkpointed.pickle"}) {
            CAPTURE(name);
            const auto t = analysis::analyze_trace(real(name), {}, {});
            CHECK(std::abs(peak_bytes(t, Category::gradient) - peak_bytes(t, Category::parameter)) <= 4096);
        }
        // At the end of a training step only .grad survives backward: every gradient stays one.
        const auto step = analysis::describe_snapshot(real("nothanmin-a2_train_step.pickle"), test::all_sites());
        CHECK(step.categories[static_cast<std::size_t>(Category::gradient)].bytes > std::int64_t{3} << 30);
        CHECK(step.categories[static_cast<std::size_t>(Category::autograd_detail)].bytes == 0);
    }

    TEST_CASE("fresh-eyes findings: trace and info put the same live blocks in the same categories") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        std::size_t compared = 0;
        for (const auto& file : test::files_in(test::real_dir() / "snapshots", "")) {
            if (file.extension() != ".pickle" && file.extension() != ".pkl") continue;
            const auto snap = snapshot::load_snapshot(file.string());
            analysis::AnalysisOptions options;
            options.top = 0;
            analysis::TraceResult t;
            try {
                t = analysis::analyze_trace(snap, options, {});
            } catch (const memsnap::Error&) {
                continue;  // no trace to replay
            }
            if (!t.disagreements.empty()) continue;  // the replay's end is not the snapshot's
            CAPTURE(file.filename().string());
            options.device = t.device;
            const auto info = analysis::describe_snapshot(snap, options);
            std::array<std::int64_t, analysis::category_count> from_trace{};
            for (const auto& s : t.sites) from_trace[static_cast<std::size_t>(s.category)] += s.live_bytes;
            for (std::size_t k = 0; k < analysis::category_count; ++k) {
                CAPTURE(analysis::to_string(static_cast<Category>(k)));
                // trace names what has a stack; blocks without one are unknown in both
                if (static_cast<Category>(k) != Category::unknown) CHECK(from_trace[k] == info.categories[k].bytes);
            }
            ++compared;
        }
        CHECK(compared >= 10);
    }

    TEST_CASE("review 9: steps given to captures of separate processes make no rates in a trend") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto snapshots = test::real_dir() / "snapshots";
        const auto path = [&](const char* name) { return test::quote(snapshots / name); };
        // Three programs of two users (two main scripts: two processes shown): --steps does not
        // make them a series of one run. Levels and their change, no rate per step, no "first seen".
        const std::string files = path("wedsonlin-a2_medium128_inference.pickle") + " " +
                                  path("silmont2000-a2_forward_bf16.pickle") + " " +
                                  path("wedsonlin-a2_medium128_training.pickle");
        const auto text = test::run_memsnap("trend --steps 100,200,300 " + files);
        REQUIRE(text.exit_code == 0);
        CHECK(text.out.find("same process   no") != std::string::npos);
        CHECK(text.out.find("/step") == std::string::npos);
        CHECK(text.out.find("first seen") == std::string::npos);
        CHECK(text.out.find("allocated_bytes: 1.59 GiB → 6.35 GiB (+4.76 GiB), compared as levels") !=
              std::string::npos);
        // JSON keeps its keys: the least-squares slope per step and the first step.
        const auto json =
            nlohmann::json::parse(test::run_memsnap("trend --format json --steps 100,200,300 " + files).out);
        CHECK(json.at("totals").at("allocated_bytes").at("slope_bytes_per_step").is_number());
        CHECK_FALSE(json.at("totals").at("allocated_bytes").contains("change"));
        CHECK(json.at("sites").at(0).at("first_step") == 300);
        // One run in order keeps its rates: golden trend/series.txt.
    }

    TEST_CASE("review 9: a capture and its copy are one moment taken twice") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto original = test::real_dir() / "snapshots" / "silmont2000-a2_tiny.pickle";
        const auto copy = std::filesystem::temp_directory_path() / fmt::format("memsnap_copy_{}.pickle", ::getpid());
        std::filesystem::copy_file(original, copy, std::filesystem::copy_options::overwrite_existing);
        // A copy under another name draws no same-file warning: its trace says it.
        const auto run = test::run_memsnap("diff --format json " + test::quote(original) + " " + test::quote(copy));
        REQUIRE(run.exit_code == 0);
        const auto json = nlohmann::json::parse(run.out);
        const auto& evidence = json.at("same_process_evidence").at(0);
        CHECK(json.at("same_process") == true);
        CHECK(evidence.at("same_trace") == true);
        CHECK(evidence.at("text").get<std::string>().find("nothing ran between them") != std::string::npos);
        // Two captures of one run share events but not the whole trace: the bundled leak pair.
        const auto pair = nlohmann::json::parse(
            test::run_memsnap("diff --format json " +
                              test::quote(test::fixtures_dir() / "pairs/leak/run_step100.pickle") + " " +
                              test::quote(test::fixtures_dir() / "pairs/leak/run_step500.pickle"))
                .out);
        CHECK(pair.at("same_process_evidence").at(0).at("same_trace") == false);
        // A trend of the capture and its copies says the same of each neighbouring pair.
        const auto series = test::run_memsnap("trend --steps 1,2,3 " + test::quote(original) + " " + test::quote(copy) +
                                              " " + test::quote(original));
        REQUIRE(series.exit_code == 0);
        CHECK(series.out.find("one moment of one process, taken twice or copied") != std::string::npos);
        std::filesystem::remove(copy);
    }

    TEST_CASE("review 9: a cut stack keeps the site frame / a stack of C++ only names its operator") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto snapshots = test::real_dir() / "snapshots";
        const auto path = [&](const char* name) { return test::quote(snapshots / name); };
        // Ten Python frames, five of torch's module.py innermost: the site's frame
        // (trainer.py:53) and the script's call stay in view, the middle is counted.
        const auto othello = test::run_memsnap("trace " + path("yoursadady-othello_snapshot_events.pickle"));
        REQUIRE(othello.exit_code == 0);
        const auto first_stack = othello.out.find("stack (96 allocations");
        REQUIRE(first_stack != std::string::npos);
        const auto stack_text =
            othello.out.substr(first_stack, othello.out.find("stack (", first_stack + 1) - first_stack);
        CHECK(stack_text.find("... 3 more Python frames") != std::string::npos);
        CHECK(stack_text.find("trainer.py:53 __init__") != std::string::npos);
        CHECK(stack_text.find("train_gpt_othello.py:51 <module>") != std::string::npos);
        // Gradients made by the autograd engine's thread carry no Python frame: the operator and
        // the backward node that ran it are shown instead of a count alone.
        const auto step = test::run_memsnap("trace " + path("nothanmin-a2_train_step.pickle"));
        REQUIRE(step.exit_code == 0);
        const auto gradient = step.out.find("<no Python frame>  [gradient]");
        REQUIRE(gradient != std::string::npos);
        const auto shown = step.out.substr(gradient, 600);
        CHECK(shown.find("at::_ops::bmm::call") != std::string::npos);
        CHECK(shown.find("BmmBackward0::apply") != std::string::npos);
    }

    TEST_CASE("review 9: a spread within the noise floor is not drawn full height") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto summaries = test::real_dir() / "summaries";
        const auto before = test::quote(summaries / "gpt-neo-generation_pair_before.txt");
        const auto after = test::quote(summaries / "gpt-neo-generation_pair_after.txt");
        // Allocated moves 8 MiB of 5 GiB (stable); reserved 138 MiB (differs).
        const auto run = test::run_memsnap("trend " + before + " " + after + " " + after);
        REQUIRE(run.exit_code == 0);
        const auto row = [&](const char* name) {
            const auto at = run.out.find(std::string("\n  ") + name + " ");
            REQUIRE(at != std::string::npos);
            return run.out.substr(at, run.out.find('\n', at + 1) - at);
        };
        CHECK(row("allocated_bytes").find("stable") != std::string::npos);
        CHECK(row("allocated_bytes").find("█") == std::string::npos);
        CHECK(row("reserved_bytes").find("█") != std::string::npos);
    }

    TEST_CASE("review 9: a device listed with an empty trace is named as such") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // Four device traces, only device 0 used.
        const auto run = test::run_memsnap(
            "trace --device 2 " + test::quote(test::real_dir() / "snapshots" / "maphsge4-select-n_llama_4dev.pickle"));
        CHECK(run.exit_code == 2);
        CHECK(run.err.find("--device 2: no segment is on it and its device trace is empty; the capture's segments are "
                           "on device 0 only") != std::string::npos);
    }

    TEST_CASE("review 9: an OOM of a full device is fixed for what held it") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // 77.91 of 78.29 GiB were activations of the forward; parameters 240 MiB.
        const auto run =
            test::run_memsnap("trace --format json " + test::quote(test::real_dir() / "snapshots" /
                                                                   "constructor-sun-gnn_3dev_expandable_oom.pickle"));
        REQUIRE(run.exit_code == 0);
        const auto json = nlohmann::json::parse(run.out);
        const auto& oom = json.at("ooms").at(0);
        REQUIRE(oom.at("classification") == "device_full");
        const auto fix = oom.at("fix").get<std::string>();
        CHECK(fix.find("the forward's activations hold 77.91 GiB") != std::string::npos);
        CHECK(fix.find("checkpointing") != std::string::npos);
        CHECK(fix.find("shard") == std::string::npos);
        CHECK(fix.find("autograd_detail") == std::string::npos);
    }

    TEST_CASE("review 9: blocks made before the trace are named by where the trace frees them") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        // wedsonlin's training step frees two 40960000-byte blocks made before its trace from the
        // user's script: no alloc stack, but the free's stack says where they went.
        const auto run = test::run_memsnap(
            "trace " + test::quote(test::real_dir() / "snapshots" / "wedsonlin-a2_medium128_training.pickle"));
        REQUIRE(run.exit_code == 0);
        CHECK(run.out.find("<made before the trace, freed at ") != std::string::npos);
        CHECK(run.out.find("<no stack: 40960000-byte blocks>") == std::string::npos);
        // zero_grad's frees stay the gradients of the step before.
        const auto step = test::run_memsnap(
            "trace " + test::quote(test::real_dir() / "snapshots" / "nothanmin-a2_train_step.pickle"));
        CHECK(step.out.find("<made before the trace, freed by zero_grad: gradients of the step before>  [gradient]") !=
              std::string::npos);
    }

}  // TEST_SUITE
