#pragma once
// Hashing of values that come from the input. A capture chooses its frames, strings and
// stacks, so a fixed hash lets a crafted file put every key in one bucket; a seed drawn once
// per process keeps that from being planned ahead. Output never depends on hash order.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace memsnap::util {

// Random per process, drawn on first use.
std::uint64_t hash_seed();

// Mixes one more value into a running hash (the splitmix64 finaliser over h ^ value).
constexpr std::uint64_t mix_hash(std::uint64_t h, std::uint64_t value) {
    std::uint64_t z = h ^ (value + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// The home of a key in an open-addressing table of 2^bits slots, by multiply-shift: the top
// bits of the key times a random odd multiplier, as many as the table has index bits, rotated
// down to where the index takes them. One multiply, where mix_hash's chain of two (recomputed
// for every slot an erase moves back) was a third of a pass over a long trace. Any two keys
// share a home with chance at most 2 / slots over the multiplier, drawn per process, so a
// crafted file cannot plan which of its keys meet.
class MultiplyShift {
  public:
    explicit MultiplyShift(std::size_t slots) : multiplier_(hash_seed() | 1), bits_(std::countr_zero(slots)) {}
    std::uint64_t operator()(std::uint64_t key) const { return std::rotl(key * multiplier_, bits_); }
    void doubled() { ++bits_; }  // the table now has twice the slots

  private:
    std::uint64_t multiplier_;
    int bits_;
};

// A seeded hash of text, for unordered containers keyed by strings from the input.
std::uint64_t hash_text(std::string_view text);

struct SeededIntHash {
    std::size_t operator()(std::uint64_t value) const { return mix_hash(hash_seed(), value); }
    std::size_t operator()(std::int64_t value) const {
        return mix_hash(hash_seed(), static_cast<std::uint64_t>(value));
    }
};

struct SeededTextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const { return hash_text(text); }
};

}  // namespace memsnap::util
