#pragma once
// Hard limits of the pickle reader. They bound memory and recursion on hostile input; the
// defaults are far above anything torch writes and can be raised from the command line.

#include <cstdint>

namespace memsnap::pickle {

struct Limits {
    // Containers inside containers (and open MARKs). Real snapshots nest about 9 deep.
    std::uint32_t max_depth = 200;
    // Memo entries. Python memoizes every string and container: about 1 per 40 bytes.
    std::uint64_t max_memo_entries = 1ull << 27;
    // Items in one list/dict/tuple, and values on the machine stack.
    std::uint64_t max_container_length = 1ull << 28;
    // Bytes in one string or bytes value.
    std::uint64_t max_string_length = 64ull << 20;
    // What the decoded document may hold at once, in bytes; 0: 32 MiB + an eighth of the
    // input size. Real snapshots hold under 1 MiB, even at 1 GB: their bulk is replaced as it
    // is read. Growing vectors may take up to three times what is held, for a moment.
    std::uint64_t max_held_bytes = 0;
    std::uint64_t held_limit(std::uint64_t input_size) const {
        return max_held_bytes != 0 ? max_held_bytes : (std::uint64_t{32} << 20) + input_size / 8;
    }
    // --max-depth above this is refused: deeper nesting would exhaust the stack of the JSON
    // reader and the 16-bit depth counters.
    static constexpr std::uint32_t depth_cap = 1000;
    // --max-memo above this is refused: the memo numbers its entries and side tables in
    // 29 bits.
    static constexpr std::uint64_t memo_cap = std::uint64_t{1} << 29;
};

}  // namespace memsnap::pickle
