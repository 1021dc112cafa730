#include <memsnap/util/hash.hpp>

#include <cstring>
#include <random>

namespace memsnap::util {

std::uint64_t hash_seed() {
    static const std::uint64_t seed = [] {
        std::random_device device;
        return (std::uint64_t{device()} << 32) ^ device();
    }();
    return seed;
}

std::uint64_t hash_text(std::string_view text) {
    std::uint64_t h = hash_seed() ^ text.size();
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
        std::uint64_t word;
        std::memcpy(&word, text.data() + i, 8);
        h = mix_hash(h, word);
    }
    std::uint64_t tail = 0;
    if (i < text.size()) std::memcpy(&tail, text.data() + i, text.size() - i);
    return mix_hash(h, tail);
}

}  // namespace memsnap::util
