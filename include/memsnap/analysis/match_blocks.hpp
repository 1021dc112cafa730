#pragma once
// Stage 1 of the snapshot diff: the live blocks of both captures, matched. A block live in
// both at the same address with the same size and stack is a survivor; the others are new
// (only after) or gone (only before). Blocks are then counted per (stack, size) group.

#include <memsnap/analysis/diff_model.hpp>
#include <memsnap/analysis/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace memsnap::analysis {

struct LiveBlock {
    std::int64_t address = 0;
    std::int64_t size = 0;
    CanonStackId stack;
    Category category = Category::unknown;
};

struct CaptureBlocks {
    std::vector<LiveBlock> live;  // active_allocated blocks that pass --device and --focus
    std::int64_t pending_free_bytes = 0;
    bool any_recorded = false;  // some live block carries a stack
};

// Live blocks of capture `capture` (its index in `index`), of `device` when given.
CaptureBlocks collect_blocks(const snapshot::Snapshot& snap, std::size_t capture, StackIndex& index,
                             std::optional<int> device);

struct GroupKey {
    CanonStackId stack;
    std::int64_t size = 0;
    Category category = Category::unknown;  // from the whole stack, hidden frames too
    auto operator<=>(const GroupKey&) const = default;
};

struct GroupCounts {
    std::int64_t before = 0, after = 0, survivors = 0;
};

struct BlockMatch {
    std::vector<std::pair<GroupKey, GroupCounts>> groups;  // sorted by key
    std::int64_t live_before = 0, live_after = 0, survivors = 0;
    std::array<CategoryChange, category_count> categories{};
};

// Matching sorts instead of hashing, so no input can make it quadratic.
BlockMatch match_blocks(const CaptureBlocks& before, const CaptureBlocks& after);

}  // namespace memsnap::analysis
