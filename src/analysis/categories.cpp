#include <memsnap/analysis/categories.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace memsnap::analysis {

namespace {

// The one table of category rules; the man page prints the same table. Patterns see
// "path:function" with '/' separators. Order matters: a cuBLAS workspace first made inside
// backward is a workspace, a backward pass inside an optimizer's step (LBFGS) makes gradients,
// compiled code inside a module's forward is compiled_graph.
constexpr CategoryRule kRules[] = {
    {Category::autocast_cache, "C++", R"(at::autocast::cached_cast)", nullptr,
     "at::autocast::cached_cast: autocast's low-precision weight copies"},
    {Category::workspace, "C++",
     R"([Ww]orkspace|getCurrentCUDABlas(Lt)?Handle|CublasHandlePool|cudnnCreate)", nullptr,
     "cuBLAS/cuDNN handles and workspaces"},
    {Category::communication, "C++", R"(c10d::|ProcessGroupNCCL|[Nn]ccl)", nullptr,
     "c10d, ProcessGroupNCCL, NCCL"},
    {Category::communication, "python", R"((^|/)torch/distributed/)", nullptr, "torch/distributed (DDP, FSDP)"},
    {Category::gradient, "C++",
     R"(torch::autograd::Engine::|AccumulateGrad|torch::autograd::python::PythonEngine)", nullptr,
     "the autograd engine (Engine::evaluate_function, AccumulateGrad)"},
    {Category::gradient, "python",
     R"((^|/)torch/autograd/(__init__|graph)\.py:(backward|grad|_engine_run_backward)$|(^|/)torch/_tensor\.py:backward$)",
     nullptr, "torch.autograd.backward / Tensor.backward / _engine_run_backward"},
    {Category::optimizer_state, "python", R"((^|/)torch/optim/)", R"(lr_scheduler\.py:)",
     "inside an optimizer's step: torch/optim, which also wraps every Optimizer subclass's step"},
    {Category::compiled_graph, "python",
     R"((^|/)torchinductor_[^/]*/|^<eval_with_key>|(^|/)torch/_(inductor|dynamo)/|(^|/)\.?triton/)",
     nullptr, "torch.compile's generated code and runtime"},
    {Category::parameter, "python",
     R"((^|/)torch/nn/modules/module\.py:(_apply|convert|to|cuda|load_state_dict|_load_from_state_dict|register_parameter|register_buffer)$)",
     nullptr, "Module.to/.cuda/_apply, load_state_dict"},
    {Category::parameter, "python",
     R"((^|/)torch/nn/modules/[^/]+\.py:__init__$|(^|/)torch/nn/(init|parameter)\.py:|(^|/)torch/serialization\.py:|(^|/)safetensors/|:from_pretrained$|:load_state_dict$)",
     nullptr, "module construction, nn.init, torch.load, safetensors, from_pretrained"},
    {Category::activation, "python",
     R"((^|/)torch/nn/modules/module\.py:(_call_impl|_wrapped_call_impl)$|:forward$)", nullptr,
     "under a module's forward"},
};
constexpr std::size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);
static_assert(kRuleCount < 255);

constexpr Category kAll[] = {Category::parameter,      Category::gradient,       Category::optimizer_state,
                             Category::activation,     Category::autocast_cache, Category::compiled_graph,
                             Category::communication,  Category::workspace,      Category::unknown};
static_assert(sizeof(kAll) / sizeof(kAll[0]) == category_count);

}  // namespace

std::string_view to_string(Category category) {
    static constexpr std::string_view names[] = {"parameter",      "gradient",       "optimizer_state",
                                                 "activation",     "autocast_cache", "compiled_graph",
                                                 "communication",  "workspace",      "unknown"};
    return names[static_cast<std::size_t>(category)];
}

std::span<const Category> all_categories() { return kAll; }
std::span<const CategoryRule> category_rules() { return kRules; }

Category category_of_rule(std::uint8_t rule) {
    return rule < kRuleCount ? kRules[rule].category : Category::unknown;
}

bool is_one_time(Category category) {
    return category == Category::gradient || category == Category::optimizer_state ||
           category == Category::workspace || category == Category::autocast_cache;
}

struct CategoryClassifier::Compiled {
    struct Rule {
        util::Pattern pattern;
        std::optional<util::Pattern> unless;
        bool python, cpp;
    };
    std::vector<Rule> rules;
};

CategoryClassifier::CategoryClassifier() : compiled_(std::make_unique<Compiled>()) {
    for (const auto& r : kRules) {
        const std::string_view frames = r.frames;
        compiled_->rules.push_back(
            {util::Pattern(r.pattern, "category rule"),
             r.unless ? std::optional<util::Pattern>(util::Pattern(r.unless, "category rule")) : std::nullopt,
             frames != "C++", frames != "python"});
    }
}

CategoryClassifier::~CategoryClassifier() = default;
CategoryClassifier::CategoryClassifier(CategoryClassifier&&) noexcept = default;

std::uint8_t CategoryClassifier::classify_frame(std::string_view path, std::string_view name,
                                                bool python) const {
    const std::string text = fmt::format("{}:{}", path, name);
    for (std::size_t i = 0; i < compiled_->rules.size(); ++i) {
        const auto& rule = compiled_->rules[i];
        if (python ? !rule.python : !rule.cpp) continue;
        if (rule.pattern.search(text) && !(rule.unless && rule.unless->search(text)))
            return static_cast<std::uint8_t>(i);
    }
    return static_cast<std::uint8_t>(kRuleCount);
}

}  // namespace memsnap::analysis
