// The user-code rule, the site rule and the category rules on frames as real captures write
// them: Unix and Windows paths, notebooks, torch.compile output, C++ frames.

#include "analysis_support.hpp"
#include "model_maker.hpp"
#include "support.hpp"

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/pattern.hpp>
#include <memsnap/util/permute.hpp>

using namespace memsnap;
using analysis::FrameClassifier;

TEST_SUITE("unit") {
    TEST_CASE("user code: Python files outside installed packages / torch and the standard library") {
        const FrameClassifier rule({});
        CHECK(rule.classify("/home/a/proj/train.py").user);
        CHECK(rule.classify("<ipython-input-3-5e8c1b1fb2a1>").user);
        CHECK(rule.classify("/tmp/ipykernel_1234/2954093452.py").user);
        CHECK_FALSE(rule.classify("/usr/lib/python3.10/site-packages/torch/nn/modules/module.py").user);
        CHECK_FALSE(rule.classify("/opt/conda/lib/python3.11/dist-packages/transformers/modeling_utils.py").user);
        CHECK_FALSE(rule.classify("/usr/lib/python3.10/runpy.py").user);
        CHECK_FALSE(rule.classify("/home/me/pytorch/torch/nn/functional.py").user);  // a torch source tree
        CHECK_FALSE(rule.classify("<frozen runpy>").user);
        // C++ frames are never user code, whatever their name.
        CHECK_FALSE(rule.classify("??").python);
        CHECK_FALSE(rule.classify("/home/a/proj/ext.cpp").user);
    }

    TEST_CASE("user code: Windows paths / drive letters and Lib\\site-packages") {
        const FrameClassifier rule({});
        CHECK_FALSE(rule.classify(R"(D:\Dev\proj\.venv\Lib\site-packages\torch\functional.py)").user);
        CHECK(rule.classify(R"(D:\Dev\proj\cs336_basics\model.py)").user);
        CHECK_FALSE(rule.classify(R"(C:\Users\me\AppData\Local\Programs\Python\Python311\Lib\contextlib.py)").user);
        CHECK_FALSE(rule.classify(R"(C:\Users\me\miniconda3\Lib\runpy.py)").user);
        CHECK_FALSE(
            rule.classify(R"(C:\Users\me\miniconda3\envs\torch\Lib\site-packages\torch\nn\modules\module.py)").user);
        CHECK(analysis::normalized_path(R"(D:\a\b.py)") == "D:/a/b.py");
    }

    TEST_CASE("user code: code torch generates is not user code") {
        const FrameClassifier rule({});
        for (const char* generated :
             {"/tmp/torchinductor_alice/kb/ckbxyz.py", "<eval_with_key>.42", "/home/a/.triton/cache/abc/kernel.py",
              R"(C:\Users\a\AppData\Local\Temp\torchinductor_a\kb\ckb.py)"}) {
            CAPTURE(generated);
            const auto flags = rule.classify(generated);
            CHECK(flags.python);
            CHECK(flags.generated);
            CHECK_FALSE(flags.user);
        }
        // torch.compile's wrappers are torch's own code, not generated: checkpointing carries them too.
        const auto dynamo = rule.classify("/usr/lib/python3.10/site-packages/torch/_dynamo/eval_frame.py");
        CHECK_FALSE(dynamo.generated);
        CHECK_FALSE(dynamo.user);
    }

    TEST_CASE("user code: --user-code and --not-user-code add to the defaults / --no-default-user-code clears") {
        analysis::SiteRules more;
        more.user_code = {"site-packages/mylib/"};
        more.not_user_code = {"/vendored/"};
        const FrameClassifier rule(more);
        CHECK(rule.classify("/usr/lib/python3.10/site-packages/mylib/core.py").user);
        CHECK_FALSE(rule.classify("/usr/lib/python3.10/site-packages/torch/nn/functional.py").user);
        CHECK_FALSE(rule.classify("/home/a/proj/vendored/thing.py").user);
        CHECK(rule.classify("/home/a/proj/train.py").user);  // the defaults still hold
        analysis::SiteRules none;
        none.use_defaults = false;
        CHECK_FALSE(FrameClassifier(none).classify("/home/a/proj/train.py").user);
        none.user_code = {"/proj/"};
        CHECK(FrameClassifier(none).classify("/home/a/proj/train.py").user);
        analysis::SiteRules bad;
        bad.user_code = {"(a)\\1"};  // backreferences are not supported: a usage error, not a crash
        CHECK_THROWS_AS(FrameClassifier{bad}, Error);
    }

    TEST_CASE("the site of a stack: innermost user frame / a compiled graph says so") {
        using analysis::FrameFlags;
        const FrameFlags cpp{}, lib{true, false, false}, user{true, true, false}, gen{true, false, true};
        CHECK(analysis::pick_site(std::vector<FrameFlags>{cpp, lib, user, lib}).index == 2);
        CHECK_FALSE(analysis::pick_site(std::vector<FrameFlags>{cpp, lib, user}).compiled);
        const auto compiled = analysis::pick_site(std::vector<FrameFlags>{cpp, gen, lib, user, user});
        CHECK(compiled.index == 3);
        CHECK(compiled.compiled);
        CHECK(analysis::pick_site(std::vector<FrameFlags>{cpp, gen, lib}).index == 2);  // library before generated
        CHECK(analysis::pick_site(std::vector<FrameFlags>{cpp, gen}).index == 1);
        CHECK_FALSE(analysis::pick_site(std::vector<FrameFlags>{cpp, cpp}).index);

        test::ModelMaker m;
        const auto s = m.stack({{"/tmp/torchinductor_u/ab/cab.py", 1822, "call"},
                                {"/usr/lib/python3.10/site-packages/torch/_inductor/utils.py", 2128, "run"},
                                {"/home/a/proj/model.py", 142, "forward"},
                                {"/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", 1750, "_call_impl"},
                                {"/home/a/proj/train.py", 10, "main"}});
        m.segment(0, 0x1000, {{512, s}});
        const auto info = test::describe(m.model());
        REQUIRE(info.top_sites.size() == 1);
        CHECK(info.top_sites[0].site.label() == "/home/a/proj/model.py:142 forward (torch.compile graph)");
        CHECK(info.top_sites[0].category == analysis::Category::compiled_graph);
    }

    TEST_CASE("categories: one table / first matching rule over the whole stack") {
        const analysis::CategoryClassifier rules;
        auto category = [&](std::string_view path, std::string_view name, bool python) {
            return analysis::category_of_rule(rules.classify_frame(path, name, python));
        };
        using analysis::Category;
        CHECK(category("??", "at::autocast::cached_cast(c10::ScalarType, at::Tensor const&, c10::DeviceType)", false) ==
              Category::autocast_cache);
        CHECK(category("??", "torch::autograd::Engine::evaluate_function(...)", false) == Category::gradient);
        CHECK(category("/x/site-packages/torch/autograd/graph.py", "_engine_run_backward", true) == Category::gradient);
        CHECK(category("/x/site-packages/torch/optim/adamw.py", "_single_tensor_adamw", true) ==
              Category::optimizer_state);
        CHECK(category("/x/site-packages/torch/optim/optimizer.py", "wrapper", true) == Category::optimizer_state);
        CHECK(category("/x/site-packages/torch/optim/lr_scheduler.py", "step", true) == Category::unknown);
        CHECK(category("??", "c10d::ProcessGroupNCCL::allreduce(...)", false) == Category::communication);
        CHECK(category("/x/site-packages/torch/distributed/fsdp/_flat_param.py", "unshard", true) ==
              Category::communication);
        CHECK(category("", "at::cuda::getNewWorkspace()", false) == Category::workspace);
        CHECK(category("/tmp/torchinductor_u/ab/cab.py", "call", true) == Category::compiled_graph);
        CHECK(category("/x/site-packages/torch/nn/modules/module.py", "_apply", true) == Category::parameter);
        CHECK(category("/x/site-packages/torch/nn/modules/linear.py", "__init__", true) == Category::parameter);
        CHECK(category("/x/site-packages/transformers/modeling_utils.py", "from_pretrained", true) ==
              Category::parameter);
        CHECK(category("/x/site-packages/torch/nn/modules/module.py", "_call_impl", true) == Category::activation);
        CHECK(category("/home/a/model.py", "forward", true) == Category::activation);
        CHECK(category("/home/a/train.py", "main", true) == Category::unknown);
        // A name that only C++ frames carry does not match a Python rule, and the other way round.
        CHECK(category("/home/a/cached_cast.py", "at::autocast::cached_cast", true) == Category::unknown);

        // Over a stack: a workspace made inside backward is a workspace; gradients inside an
        // optimizer's step (LBFGS) are gradients.
        test::ModelMaker m;
        const auto workspace = m.stack(
            {{"", 0, "at::cuda::getNewWorkspace()"}, {"??", 0, "torch::autograd::Engine::evaluate_function(...)"}});
        const auto lbfgs = m.stack({{"??", 0, "torch::autograd::Engine::evaluate_function(...)"},
                                    {"/x/site-packages/torch/optim/lbfgs.py", 300, "step"}});
        m.segment(0, 0x1000, {{512, workspace}, {1024, lbfgs}});
        analysis::StackIndex index({&m.model()}, {}, {});
        CHECK(index.category(0, workspace) == Category::workspace);
        CHECK(index.category(0, lbfgs) == Category::gradient);
        CHECK(index.category(0, snapshot::no_stack) == Category::unknown);
    }

    TEST_CASE("patterns: a set answers for each pattern what it answers alone / an invalid one is named") {
        const std::vector<std::string_view> patterns = {R"((^|/)torch/)", R"(^<eval_with_key>)", R"(\.py$)",
                                                        R"(lr_scheduler\.py$)", "[Ww]orkspace"};
        const util::PatternSet set(patterns, "test rule");
        const std::string_view texts[] = {"/usr/lib/python3/site-packages/torch/optim/lr_scheduler.py",
                                          "<eval_with_key>.3",
                                          "torch/nn/modules/module.py",
                                          "at::native::getWorkspace",
                                          "",
                                          "mytorch/x.pyc",
                                          std::string_view("a\0torch/\xff", 10)};
        for (const auto text : texts) {
            std::uint64_t alone = 0;
            for (std::size_t i = 0; i < patterns.size(); ++i)
                if (util::Pattern(patterns[i], "test rule").search(text)) alone |= std::uint64_t{1} << i;
            CAPTURE(text);
            CHECK(set.matches(text) == alone);
        }
        CHECK(set.matches("/a/torch/optim/lr_scheduler.py") == 0b1101);
        CHECK_THROWS_WITH_AS(util::PatternSet({"ok", "(unclosed"}, "--user-code"),
                             doctest::Contains("--user-code: invalid regular expression '(unclosed'"), Error);
    }

    TEST_CASE("permute: each record lands where the order says / the order is used up") {
        std::vector<std::string> items = {"a", "b", "c", "d", "e", "f"};
        std::vector<std::uint32_t> order = {3, 0, 1, 2, 5, 4};  // a 4-cycle and a swap
        util::permute(items, order);
        CHECK(items == std::vector<std::string>{"d", "a", "b", "c", "f", "e"});
        CHECK(order == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5});
        std::vector<std::string> none;
        std::vector<std::uint32_t> empty;
        util::permute(none, empty);
        CHECK(none.empty());
    }

}  // TEST_SUITE
