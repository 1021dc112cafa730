#pragma once
// Memory categories from a block's whole allocation stack, Python and C++ frames alike: the
// categories of PyTorch's profiler memory timeline, told here from a snapshot alone.

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace memsnap::analysis {

enum class Category : std::uint8_t {
    parameter,
    gradient,
    autograd_detail,  // made in backward, not a parameter's gradient: gradients of activations
    optimizer_state,
    temporary,  // made in an optimizer step and freed in it (a trace tells; a stack alone does not)
    activation,
    autocast_cache,
    compiled_graph,
    communication,
    workspace,
    unknown,
};
inline constexpr std::size_t category_count = 11;
std::string_view to_string(Category category);
// Every category, in report order.
std::span<const Category> all_categories();

// One rule of the table: a frame of the stack (Python or C++, as `frames` says) whose path
// (with '/' separators) matches `path` and not `unless_path`, and whose function name
// matches `function`, gives the frame `category`; a null pattern matches anything; a frame
// takes its first rule in table order. A stack's category is that of its innermost frame with
// a rule (stack_rule): what allocates decides, not an outer wrapper. Path and function are
// matched apart, so that each file name and each function name is looked at once however many
// frames share it.
struct CategoryRule {
    Category category;
    const char* frames;       // "python", "C++" or "any"
    const char* path;         // nullptr: any path
    const char* function;     // nullptr: any function
    const char* unless_path;  // nullptr: no exception
    const char* evidence;     // for people: what the rule looks for
};
std::span<const CategoryRule> category_rules();

// The path's part of a frame's role: worked out once per file.
struct PathRole {
    bool torch = false, optimizer_wrapper = false;
};
// What a file's path tells: its rules (a bit each, as path_rules) and its role.
struct PathFacts {
    std::uint32_t rules = 0;
    PathRole role;
};

// The table compiled once. A frame's rule is the first whose path and function conditions
// both hold: `path_rules` (part of `path_facts`) and `function_rules` give a bit per rule for
// one text each (so callers can keep them per string), `first_rule` combines them. A stack's
// category is that of its smallest rule index, see category_of_rule; category_rules().size()
// means none.
class CategoryClassifier {
  public:
    CategoryClassifier();
    ~CategoryClassifier();
    CategoryClassifier(CategoryClassifier&&) noexcept;
    PathFacts path_facts(std::string_view path) const;
    std::uint32_t path_rules(std::string_view path) const { return path_facts(path).rules; }
    std::uint32_t function_rules(std::string_view name) const;
    std::uint8_t first_rule(std::uint32_t path_rules, std::uint32_t function_rules, bool python) const;
    std::uint8_t classify_frame(std::string_view path, std::string_view name, bool python) const {
        return first_rule(path_rules(path), function_rules(name), python);
    }

  private:
    struct Compiled;
    std::shared_ptr<const Compiled> compiled_;  // one per process: the table is fixed
};

// The category of a rule index from classify_frame (unknown past the table).
Category category_of_rule(std::uint8_t rule);

// What the walk over a stack needs of one frame.
struct FrameRole {
    std::uint8_t rule = 0;  // classify_frame; category_rules().size(): none
    bool python = false;
    bool torch = false;              // PyTorch's own Python code (a torch/ package path)
    bool optimizer_wrapper = false;  // torch/optim/optimizer.py, which wraps every Optimizer's step
    bool named_step = false;         // a function named step
    std::uint32_t file = 0;          // an id of the frame's file, equal for equal files
};

// The rule that decides a stack's category, its frames innermost first: the first frame with a
// rule, walking outward. torch/optim decides only for the optimizer's own code: when no Python
// frame outside torch lies between it and the allocation, or those frames are one file's, the
// innermost of them a `step` that torch/optim/optimizer.py wraps (an Optimizer subclass). Code
// of another file in between (PyTorch Lightning's closure, which runs forward and backward
// inside optimizer.step) is not optimizer state: the walk goes on outward past torch/optim.
std::uint8_t stack_rule(std::span<const FrameRole> innermost_first);

// Growth in these categories is expected once (the first backward and optimizer step, library
// warm-up, autocast's weight copies) rather than a leak, when the site held none of it before.
bool is_one_time(Category category);

}  // namespace memsnap::analysis
