#include <memsnap/analysis/sites/live_blocks.hpp>

#include <fmt/format.h>

namespace memsnap::analysis {

CaptureBlocks collect_blocks(const snapshot::Snapshot& snap, std::size_t capture, StackIndex& index,
                             std::optional<int> device) {
    CaptureBlocks out;
    for (const auto& b : snap.blocks) {
        if (device && snap.segments[b.segment].device != *device) continue;
        if (b.state == snapshot::BlockState::active_pending_free) out.pending_free_bytes += b.size;
        if (!b.live()) continue;
        const auto stack = index.stack(capture, b.stack);
        if (!index.focused(stack)) continue;
        out.live.push_back({b.address, b.size, stack, index.category(capture, b.stack)});
        out.any_recorded |= b.stack != snapshot::no_stack;
    }
    return out;
}

SiteKey site_key(const StackIndex& index, CanonStackId stack, std::int64_t size, Category category,
                 bool stacks_recorded) {
    SiteKey site;
    if (stacks_recorded)
        site = index.site(stack);
    else
        site.name = fmt::format("<no stack: {}-byte blocks>", size);
    site.category = category;
    return site;
}

}  // namespace memsnap::analysis
