#pragma once
// Hashing of values that come from the input. A capture chooses its frames, strings and
// stacks, so a fixed hash lets a crafted file put every key in one bucket; a seed drawn once
// per process keeps that from being planned ahead. Output never depends on hash order.

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
