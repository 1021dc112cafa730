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
    // What the decoded document may hold at once, in bytes; 0: 64 MiB + half the input size.
    // Real snapshots hold a small fraction of that: their bulk is replaced as it is read.
    std::uint64_t max_held_bytes = 0;
    // --max-depth above this is refused: deeper nesting would exhaust the stack of the JSON
    // reader and the 16-bit depth counters.
    static constexpr std::uint32_t depth_cap = 1000;
};

}  // namespace memsnap::pickle
