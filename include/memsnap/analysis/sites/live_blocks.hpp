#pragma once
// The live blocks of one capture as the sites see them: each with its canonical stack and
// category, and the site that names it.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/snapshot/model.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace memsnap::analysis {

struct LiveBlock {
    std::int64_t address = 0;
    std::int64_t size = 0;
    CanonStackId stack;
    Category category = Category::unknown;
    std::uint16_t device = 0;  // segments hold devices 0..65535
};

struct CaptureBlocks {
    std::vector<LiveBlock> live;  // active_allocated blocks that pass --device and --focus
    std::int64_t pending_free_bytes = 0;
    bool any_recorded = false;  // some live block carries a stack
};

// Live blocks of capture `capture` (its index in `index`), of `device` when given.
CaptureBlocks collect_blocks(const snapshot::Snapshot& snap, std::size_t capture, StackIndex& index,
                             std::optional<int> device);

// The site of a block (stack, size, category): what `info` and `diff` both call it. Blocks
// without a stack have no site: they are told apart by size alone ("<no stack: N-byte blocks>").
SiteKey site_key(const StackIndex& index, CanonStackId stack, std::int64_t size, Category category);
// A number equal for two blocks exactly when their sites are (see site_key), without building
// the site's name.
std::uint64_t site_token(const StackIndex& index, CanonStackId stack, std::int64_t size);
// Whether a block's site is one of blocks without a stack.
inline bool without_stack(CanonStackId stack) { return stack == CanonStackId{}; }

}  // namespace memsnap::analysis
