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
    optimizer_state,
    activation,
    autocast_cache,
    compiled_graph,
    communication,
    workspace,
    unknown,
};
inline constexpr std::size_t category_count = 9;
std::string_view to_string(Category category);
// Every category, in report order.
std::span<const Category> all_categories();

// One rule of the table: a frame of the stack (Python or C++, as `frames` says) whose
// "file:function" text matches `pattern`, and not `unless`, puts the block in `category`.
// The first rule, in table order, that any frame of the stack matches decides.
struct CategoryRule {
    Category category;
    const char* frames;   // "python", "C++" or "any"
    const char* pattern;
    const char* unless;   // nullptr: no exception
    const char* evidence; // for people: what the rule looks for
};
std::span<const CategoryRule> category_rules();

// The table compiled once. `classify_frame` gives the index of the first rule a single frame
// matches (category_rules().size() when none); a stack's category is that of its smallest
// index, see category_of_rule.
class CategoryClassifier {
public:
    CategoryClassifier();
    ~CategoryClassifier();
    CategoryClassifier(CategoryClassifier&&) noexcept;
    std::uint8_t classify_frame(std::string_view path, std::string_view name, bool python) const;

private:
    struct Compiled;
    std::unique_ptr<Compiled> compiled_;
};

// The category of a rule index from classify_frame (unknown past the table).
Category category_of_rule(std::uint8_t rule);

// Growth in these categories is expected once (the first backward and optimizer step, library
// warm-up, autocast's weight copies) rather than a leak, when the site held none of it before.
bool is_one_time(Category category);

}  // namespace memsnap::analysis
