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
        out.live.push_back({b.address, b.size, stack, index.category(capture, b.stack, b.requested_size),
                            static_cast<std::uint16_t>(snap.segments[b.segment].device)});
        out.any_recorded |= b.stack != snapshot::no_stack;
    }
    return out;
}

SiteKey site_key(const StackIndex& index, CanonStackId stack, std::int64_t size, Category category) {
    SiteKey site;
    if (!without_stack(stack))
        site = index.site(stack);
    else
        site.name = fmt::format("<no stack: {}-byte blocks>", size);
    site.category = category;
    return site;
}

std::uint64_t site_token(const StackIndex& index, CanonStackId stack, std::int64_t size) {
    // Index tokens stay far below the top bit; a size class sets it.
    if (without_stack(stack)) return (std::uint64_t{1} << 63) | static_cast<std::uint64_t>(size);
    return index.site_token(stack);
}

}  // namespace memsnap::analysis
