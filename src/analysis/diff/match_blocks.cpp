#include <memsnap/analysis/diff/match_blocks.hpp>

#include <algorithm>
#include <tuple>

namespace memsnap::analysis {

namespace {

auto address_order(const LiveBlock& b) { return std::make_tuple(b.device, b.address, b.size, b.stack); }

std::vector<const LiveBlock*> sorted_by_address(const std::vector<LiveBlock>& blocks) {
    std::vector<const LiveBlock*> out;
    out.reserve(blocks.size());
    for (const auto& b : blocks) out.push_back(&b);
    std::sort(out.begin(), out.end(),
              [](const LiveBlock* a, const LiveBlock* b) { return address_order(*a) < address_order(*b); });
    return out;
}

// Survivors per group: a merge walk over both captures in address order.
std::vector<GroupKey> survivor_keys(const std::vector<LiveBlock>& before, const std::vector<LiveBlock>& after) {
    const auto a = sorted_by_address(before);
    const auto b = sorted_by_address(after);
    std::vector<GroupKey> out;
    for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
        const auto x = address_order(*a[i]), y = address_order(*b[j]);
        if (x < y) {
            ++i;
        } else if (y < x) {
            ++j;
        } else {
            out.push_back({a[i]->stack, a[i]->size, a[i]->category, a[i]->device});
            ++i;
            ++j;
        }
    }
    return out;
}

}  // namespace

BlockMatch match_blocks(const CaptureBlocks& before, const CaptureBlocks& after) {
    BlockMatch m;
    m.live_before = static_cast<std::int64_t>(before.live.size());
    m.live_after = static_cast<std::int64_t>(after.live.size());
    struct Row {
        GroupKey key;
        int side;  // 0 before, 1 after, 2 survivor
    };
    std::vector<Row> rows;
    rows.reserve(before.live.size() + after.live.size());
    const auto first_device = !before.live.empty()  ? before.live.front().device
                              : !after.live.empty() ? after.live.front().device
                                                    : std::uint16_t{0};
    for (const auto& b : before.live) {
        rows.push_back({{b.stack, b.size, b.category, b.device}, 0});
        m.several_devices |= b.device != first_device;
        auto& c = m.categories[static_cast<std::size_t>(b.category)];
        c.before_bytes += b.size;
        ++c.before_blocks;
    }
    for (const auto& b : after.live) {
        rows.push_back({{b.stack, b.size, b.category, b.device}, 1});
        m.several_devices |= b.device != first_device;
        auto& c = m.categories[static_cast<std::size_t>(b.category)];
        c.after_bytes += b.size;
        ++c.after_blocks;
    }
    for (const auto& key : survivor_keys(before.live, after.live)) rows.push_back({key, 2});
    std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return x.key < y.key; });
    for (const auto& row : rows) {
        if (m.groups.empty() || m.groups.back().first != row.key) m.groups.push_back({row.key, {}});
        auto& g = m.groups.back().second;
        if (row.side == 0) ++g.before;
        if (row.side == 1) ++g.after;
        if (row.side == 2) {
            ++g.survivors;
            ++m.survivors;
        }
    }
    return m;
}

}  // namespace memsnap::analysis
