#pragma once
// Stage 1 of the snapshot diff: the live blocks of both captures, matched. A block live in
// both at the same address with the same size and stack is a survivor; the others are new
// (only after) or gone (only before). Blocks are then counted per (stack, size) group.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace memsnap::analysis {

struct GroupKey {
    CanonStackId stack;
    std::int64_t size = 0;
    Category category = Category::unknown;  // from the whole stack, hidden frames too
    std::uint16_t device = 0;               // last: one (stack, size) on several devices is adjacent
    auto operator<=>(const GroupKey&) const = default;
};

struct GroupCounts {
    std::int64_t before = 0, after = 0, survivors = 0;
};

struct BlockMatch {
    std::vector<std::pair<GroupKey, GroupCounts>> groups;  // sorted by key
    std::int64_t live_before = 0, live_after = 0, survivors = 0;
    bool several_devices = false;  // the live blocks lie on more than one device
    std::array<CategoryChange, category_count> categories{};
};

// Matching sorts instead of hashing, so no input can make it quadratic.
BlockMatch match_blocks(const CaptureBlocks& before, const CaptureBlocks& after);

}  // namespace memsnap::analysis
