#pragma once
// Reordering in place by an index order, for records too big to move about in a sort: sort
// their indices, then move each record once.

#include <cstddef>
#include <utility>
#include <vector>

namespace memsnap::util {

// Afterwards items[i] holds what items[order[i]] held. `order` must be a permutation of
// 0..items.size()-1; it is used up (left as the identity).
template <typename T, typename Index>
void permute(std::vector<T>& items, std::vector<Index>& order) {
    for (std::size_t start = 0; start < order.size(); ++start) {
        if (order[start] == start) continue;
        // Follow the cycle through `start`, pulling each record into the place that wants it.
        T held = std::move(items[start]);
        std::size_t at = start;
        while (order[at] != start) {
            const std::size_t from = order[at];
            items[at] = std::move(items[from]);
            order[at] = static_cast<Index>(at);
            at = from;
        }
        items[at] = std::move(held);
        order[at] = static_cast<Index>(at);
    }
}

}  // namespace memsnap::util
