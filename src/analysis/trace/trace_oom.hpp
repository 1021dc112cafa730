#pragma once
// Internal to `trace`: an out-of-memory event explained with the allocator's state at its
// moment, and classified by what its numbers allow.

#include "trace_replay.hpp"

#include <memsnap/analysis/trace/trace.hpp>

namespace memsnap::analysis::detail {

// The free ranges of the cache just before event `moment`: the reserved ranges minus the
// blocks live then. Returns the largest overall and the largest on `stream`.
struct FreeSpace {
    std::int64_t largest = 0, largest_same_stream = 0, total = 0;
};
FreeSpace free_space_at(const snapshot::Snapshot& snap, const Replay& r, int device, std::size_t moment,
                        std::int64_t stream);

// Classification, evidence and advice of `oom` from its numbers (filled in by the caller);
// numbers that overflow are an input error naming `file`.
void classify_oom(OomExplanation& oom, const std::string& file);

}  // namespace memsnap::analysis::detail
