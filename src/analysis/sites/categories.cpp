#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace memsnap::analysis {

namespace {

// The one table of category rules; the man page prints the same table. A stack takes the rule
// of its innermost frame that has one (stack_rule), so a cuBLAS workspace first made inside
// backward is a workspace, a backward pass inside an optimizer's step (LBFGS) makes gradients,
// compiled code inside a module's forward is compiled_graph, a forward inside Lightning's
// optimizer closure makes activations. Within one frame, order decides.
constexpr CategoryRule kRules[] = {
    {Category::autocast_cache, "C++", nullptr, R"(at::autocast::cached_cast)", nullptr,
     "at::autocast::cached_cast: autocast's low-precision weight copies"},
    {Category::workspace, "C++", nullptr, R"([Ww]orkspace|getCurrentCUDABlas(Lt)?Handle|CublasHandlePool|cudnnCreate)",
     nullptr, "cuBLAS/cuDNN handles and workspaces"},
    {Category::communication, "C++", nullptr, R"(c10d::|ProcessGroupNCCL|[Nn]ccl)", nullptr,
     "c10d, ProcessGroupNCCL, NCCL"},
    {Category::communication, "python", R"((^|/)torch/distributed/)", nullptr, nullptr,
     "torch/distributed (DDP, FSDP)"},
    {Category::gradient, "C++", nullptr,
     R"(torch::autograd::Engine::|AccumulateGrad|torch::autograd::python::PythonEngine)", nullptr,
     "the autograd engine (Engine::evaluate_function, AccumulateGrad)"},
    {Category::gradient, "python", R"((^|/)torch/autograd/(__init__|graph)\.py$)",
     R"(^(backward|grad|_engine_run_backward)$)", nullptr, "torch.autograd.backward / grad / _engine_run_backward"},
    {Category::gradient, "python", R"((^|/)torch/_tensor\.py$)", R"(^backward$)", nullptr, "Tensor.backward"},
    {Category::optimizer_state, "python", R"((^|/)torch/optim/)", nullptr, R"(lr_scheduler\.py$)",
     "inside an optimizer's step: torch/optim, which also wraps every Optimizer subclass's step"},
    {Category::compiled_graph, "python",
     R"((^|/)torchinductor_[^/]*/|^<eval_with_key>|(^|/)torch/_inductor/|(^|/)torch/_functorch/_aot_autograd/|(^|/)\.?triton/)",
     nullptr, nullptr,
     "compiled code: inductor's output files, torch/_inductor, the AOT-autograd runtime, FX graph modules, Triton "
     "(not the torch._dynamo wrappers that checkpointing and zero_grad carry)"},
    {Category::parameter, "python", R"((^|/)torch/nn/parallel/replicate\.py$)", nullptr, nullptr,
     "DataParallel's copies of the parameters (replicate)"},
    {Category::parameter, "python", R"((^|/)torch/nn/parallel/comm\.py$)", R"(^(broadcast|broadcast_coalesced)$)",
     nullptr, "DataParallel's copies of the parameters (comm.broadcast_coalesced)"},
    {Category::unknown, "python",
     R"((^|/)torch/nn/parallel/(comm|scatter_gather|data_parallel)\.py$|(^|/)torch_geometric/nn/data_parallel\.py$)",
     R"(^(scatter|scatter_kwargs|_scatter|scatter_map)$)", nullptr,
     "DataParallel's scatter of the inputs to the devices: input data, not activations (unknown)"},
    {Category::parameter, "python", R"((^|/)torch/nn/modules/module\.py$)",
     R"(^(_apply|convert|to|cuda|load_state_dict|_load_from_state_dict|register_parameter|register_buffer)$)", nullptr,
     "Module.to/.cuda/_apply, load_state_dict"},
    {Category::parameter, "python", R"((^|/)torch/nn/modules/[^/]+\.py$)", R"(^__init__$)", nullptr,
     "module construction"},
    {Category::parameter, "python",
     R"((^|/)torch/nn/(init|parameter)\.py$|(^|/)torch/serialization\.py$|(^|/)safetensors/)", nullptr, nullptr,
     "nn.init, nn.Parameter, torch.load, safetensors"},
    {Category::parameter, "python", nullptr, R"(^(from_pretrained|load_state_dict)$)", nullptr,
     "from_pretrained, load_state_dict"},
    {Category::activation, "python", R"((^|/)torch/nn/modules/module\.py$)", R"(^(_call_impl|_wrapped_call_impl)$)",
     nullptr, "a module's __call__"},
    {Category::activation, "python", nullptr, R"(^forward$)", nullptr, "under a module's forward"},
};
constexpr std::size_t kRuleCount = sizeof(kRules) / sizeof(kRules[0]);
static_assert(kRuleCount <= 32);  // a bit each in path_rules and function_rules

constexpr Category kAll[] = {Category::parameter,       Category::gradient,       Category::autograd_detail,
                             Category::optimizer_state, Category::temporary,      Category::activation,
                             Category::autocast_cache,  Category::compiled_graph, Category::communication,
                             Category::workspace,       Category::unknown};
static_assert(sizeof(kAll) / sizeof(kAll[0]) == category_count);

}  // namespace

std::string_view to_string(Category category) {
    static constexpr std::string_view names[] = {"parameter",     "gradient",   "autograd_detail", "optimizer_state",
                                                 "temporary",     "activation", "autocast_cache",  "compiled_graph",
                                                 "communication", "workspace",  "unknown"};
    return names[static_cast<std::size_t>(category)];
}

std::span<const Category> all_categories() { return kAll; }
std::span<const CategoryRule> category_rules() { return kRules; }

Category category_of_rule(std::uint8_t rule) { return rule < kRuleCount ? kRules[rule].category : Category::unknown; }

std::uint8_t stack_rule(std::span<const FrameRole> frames) {
    const FrameRole* outside = nullptr;  // the innermost Python frame outside torch
    bool outside_mixed = false;          // outside frames of more than one file
    const FrameRole* inner_python = nullptr;
    for (const auto& f : frames) {
        if (f.rule < kRuleCount) {
            if (kRules[f.rule].category != Category::optimizer_state || !outside) return f.rule;
            const bool own_step = !outside_mixed && f.optimizer_wrapper && inner_python && !inner_python->torch &&
                                  inner_python->named_step && inner_python->file == outside->file;
            if (own_step) return f.rule;
            // Another library's or the user's code runs inside the optimizer's step: not its state.
        } else if (f.python && !f.torch) {
            if (outside && outside->file != f.file) outside_mixed = true;
            if (!outside) outside = &f;
        }
        if (f.python) inner_python = &f;
    }
    return static_cast<std::uint8_t>(kRuleCount);
}

bool is_one_time(Category category) {
    return category == Category::gradient || category == Category::optimizer_state || category == Category::workspace ||
           category == Category::autocast_cache;
}

// Each rule's patterns are looked up by their place in one set per text kind: a capture's
// every distinct path and function name is read once, not once per rule.
struct CategoryClassifier::Compiled {
    static constexpr int kNone = -1;
    struct Rule {
        int path = kNone, function = kNone, unless_path = kNone;  // into paths / functions
        bool python, cpp;                                         // the frames it applies to
    };
    std::vector<Rule> rules;
    int torch_code = kNone, optimizer_wrapper = kNone;  // PathRole's, into paths
    std::optional<util::PatternSet> paths, functions;
    void compile();
};

// The table's patterns are compiled once per process: every StackIndex classifies with them
// (a diff builds one per side and one for the pair, on its reading threads), and compiling
// them costs more than classifying a capture's files. RE2 matches from many threads at once.
CategoryClassifier::CategoryClassifier() {
    static const std::shared_ptr<const Compiled> table = [] {
        auto out = std::make_shared<Compiled>();
        out->compile();
        return out;
    }();
    compiled_ = table;
}

void CategoryClassifier::Compiled::compile() {
    std::vector<std::string_view> path_patterns, function_patterns;
    const auto add = [](std::vector<std::string_view>& set, const char* pattern) {
        if (!pattern) return kNone;
        set.emplace_back(pattern);
        return static_cast<int>(set.size() - 1);
    };
    for (const auto& r : kRules) {
        const std::string_view frames = r.frames;
        rules.push_back({add(path_patterns, r.path), add(function_patterns, r.function),
                         add(path_patterns, r.unless_path), frames != "C++", frames != "python"});
    }
    torch_code = add(path_patterns, R"((^|/)torch/)");
    optimizer_wrapper = add(path_patterns, R"((^|/)torch/optim/optimizer\.py$)");
    paths.emplace(path_patterns, "category rule");
    functions.emplace(function_patterns, "category rule");
}

CategoryClassifier::~CategoryClassifier() = default;
CategoryClassifier::CategoryClassifier(CategoryClassifier&&) noexcept = default;

namespace {

bool matched(std::uint64_t matches, int pattern) { return (matches >> pattern) & 1; }

}  // namespace

PathFacts CategoryClassifier::path_facts(std::string_view path) const {
    const auto& c = *compiled_;
    const std::uint64_t matches = c.paths->matches(path);
    PathFacts out;
    for (std::size_t i = 0; i < c.rules.size(); ++i) {
        const auto& rule = c.rules[i];
        if ((rule.path == Compiled::kNone || matched(matches, rule.path)) &&
            !(rule.unless_path != Compiled::kNone && matched(matches, rule.unless_path)))
            out.rules |= std::uint32_t{1} << i;
    }
    out.role = {matched(matches, c.torch_code), matched(matches, c.optimizer_wrapper)};
    return out;
}

std::uint32_t CategoryClassifier::function_rules(std::string_view name) const {
    const std::uint64_t matches = compiled_->functions->matches(name);
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < compiled_->rules.size(); ++i) {
        const int function = compiled_->rules[i].function;
        if (function == Compiled::kNone || matched(matches, function)) bits |= std::uint32_t{1} << i;
    }
    return bits;
}

std::uint8_t CategoryClassifier::first_rule(std::uint32_t path_rules, std::uint32_t function_rules, bool python) const {
    const std::uint32_t both = path_rules & function_rules;
    for (std::size_t i = 0; i < compiled_->rules.size(); ++i) {
        const auto& rule = compiled_->rules[i];
        if ((both >> i & 1) && (python ? rule.python : rule.cpp)) return static_cast<std::uint8_t>(i);
    }
    return static_cast<std::uint8_t>(kRuleCount);
}

}  // namespace memsnap::analysis
