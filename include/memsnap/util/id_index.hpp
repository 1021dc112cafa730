#pragma once
// A hash index of ids whose values live in the caller's own table (strings, frames, stacks,
// live allocations): open addressing, 8 bytes a slot, at most half full, no allocation per
// entry. The caller hashes (with the seeded hashes of util/hash.hpp) and says when two are
// equal.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace memsnap::util {

// Empties slot `gap` of a linear-probing table (a power of two of slots, `mask` one less): the
// slots after it, up to the first empty one, move back into the gap where their home allows
// (a slot may fill the gap when its home is not between the gap and it), so that lookups stay
// as short as in a table that never held it, without tombstones. An empty slot is a
// value-initialised one; `empty(slot)` says which are, `home(slot)` gives a slot's hash.
template <class Slot, class Empty, class Home>
void erase_slot(Slot* slots, std::size_t mask, std::size_t gap, Empty&& empty, Home&& home) {
    for (std::size_t at = (gap + 1) & mask; !empty(slots[at]); at = (at + 1) & mask) {
        const std::size_t from = home(slots[at]) & mask;
        if (((at - from) & mask) >= ((at - gap) & mask)) {
            slots[gap] = slots[at];
            gap = at;
        }
    }
    slots[gap] = Slot{};
}

// Doubles a linear-probing table (a power of two of slots): every slot that is not `empty`
// goes to the first empty slot from its home (`home(slot)`) in a table twice as large.
template <class Slot, class Empty, class Home>
void double_table(std::vector<Slot>& slots, Empty&& empty, Home&& home) {
    std::vector<Slot> bigger(slots.size() * 2);
    const std::size_t mask = bigger.size() - 1;
    for (const Slot& s : slots) {
        if (empty(s)) continue;
        std::size_t at = home(s) & mask;
        while (!empty(bigger[at])) at = (at + 1) & mask;
        bigger[at] = s;
    }
    slots = std::move(bigger);
}

class IdIndex {
  public:
    IdIndex() : slots_(16) {}

    // The id whose value `equal(id)` says matches, among those filed under `hash`.
    template <class Equal>
    std::optional<std::uint32_t> find(std::uint64_t hash, Equal&& equal) const {
        const auto h = static_cast<std::uint32_t>(hash);
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t at = h & mask; slots_[at].id_plus_one != 0; at = (at + 1) & mask)
            if (slots_[at].hash == h && equal(slots_[at].id_plus_one - 1)) return slots_[at].id_plus_one - 1;
        return std::nullopt;
    }

    // Files an id that find() did not find.
    void insert(std::uint64_t hash, std::uint32_t id) {
        if (2 * (count_ + 1) > slots_.size()) grow();
        place(slots_, {static_cast<std::uint32_t>(hash), id + 1});
        ++count_;
    }

    // Removes the id filed under `hash` that `equal(id)` matches and returns it; none when there
    // is none. The entries after it move back into the gap (no tombstones), so lookups stay as
    // short as in an index that never had it.
    template <class Equal>
    std::optional<std::uint32_t> erase(std::uint64_t hash, Equal&& equal) {
        const auto h = static_cast<std::uint32_t>(hash);
        const std::size_t mask = slots_.size() - 1;
        std::size_t gap = h & mask;
        for (; slots_[gap].id_plus_one != 0; gap = (gap + 1) & mask)
            if (slots_[gap].hash == h && equal(slots_[gap].id_plus_one - 1)) break;
        if (slots_[gap].id_plus_one == 0) return std::nullopt;
        const std::uint32_t erased = slots_[gap].id_plus_one - 1;
        erase_slot(
            slots_.data(), mask, gap, [](const Slot& s) { return s.id_plus_one == 0; },
            [](const Slot& s) { return std::size_t{s.hash}; });
        --count_;
        return erased;
    }

    // Asks for the first slot a lookup of `hash` reads: an index larger than the caches is
    // read at random, and a lookup issued early enough does not wait for memory. Inlined
    // always: GCC takes a function that only prefetches for one without effect, and drops
    // its calls.
    [[gnu::always_inline]] void prefetch(std::uint64_t hash) const {
        __builtin_prefetch(&slots_[static_cast<std::uint32_t>(hash) & (slots_.size() - 1)]);
    }

    // Calls fn(id) for every id filed, in no particular order.
    template <class Fn>
    void for_each(Fn&& fn) const {
        for (const Slot& s : slots_)
            if (s.id_plus_one != 0) fn(s.id_plus_one - 1);
    }

    std::size_t size() const { return count_; }
    std::size_t bytes() const { return slots_.size() * sizeof(Slot); }  // of its table

  private:
    struct Slot {
        std::uint32_t hash = 0;         // the low half of the caller's hash: placement and a quick filter
        std::uint32_t id_plus_one = 0;  // 0: empty
    };
    static void place(std::vector<Slot>& slots, Slot slot) {
        const std::size_t mask = slots.size() - 1;
        std::size_t at = slot.hash & mask;
        while (slots[at].id_plus_one != 0) at = (at + 1) & mask;
        slots[at] = slot;
    }
    void grow() {
        double_table(
            slots_, [](const Slot& s) { return s.id_plus_one == 0; },
            [](const Slot& s) { return std::size_t{s.hash}; });
    }
    std::vector<Slot> slots_;
    std::size_t count_ = 0;
};

}  // namespace memsnap::util
