#include <memsnap/snapshot/model.hpp>

#include <algorithm>

namespace memsnap::snapshot {

namespace {

std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    // splitmix-style combine: cheap and well spread for small integer ids.
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    return h;
}

}  // namespace

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& other) : strings_(other.strings_) {
    for (std::size_t i = 0; i < strings_.size(); ++i)
        index_.emplace(strings_[i], StringId(static_cast<std::uint32_t>(i)));
}

StringTable& StringTable::operator=(const StringTable& other) {
    if (this != &other) {
        StringTable copy(other);
        *this = std::move(copy);
    }
    return *this;
}

StringId StringTable::intern(std::string_view text) {
    if (auto it = index_.find(text); it != index_.end()) return it->second;
    strings_.emplace_back(text);
    const StringId id(static_cast<std::uint32_t>(strings_.size() - 1));
    index_.emplace(strings_.back(), id);
    return id;
}

FrameId FrameTable::intern(const Frame& frame) {
    const std::uint64_t h =
        mix(mix(mix(0, frame.filename.value), frame.name.value), static_cast<std::uint64_t>(frame.line));
    auto& bucket = index_[h];
    for (FrameId id : bucket)
        if (frames_[id.value] == frame) return id;
    frames_.push_back(frame);
    const FrameId id(static_cast<std::uint32_t>(frames_.size() - 1));
    bucket.push_back(id);
    return id;
}

StackTable::StackTable() {
    offsets_ = {0, 0};  // stack 0: empty
    hashes_ = {0};
    index_.assign(1024, 0);
}

void StackTable::grow_index() {
    std::vector<std::uint32_t> bigger(index_.size() * 2, 0);
    const std::size_t mask = bigger.size() - 1;
    for (std::uint32_t entry : index_) {
        if (entry == 0) continue;
        std::size_t at = hashes_[entry - 1] & mask;
        while (bigger[at] != 0) at = (at + 1) & mask;
        bigger[at] = entry;
    }
    index_ = std::move(bigger);
}

// Four independent multiply lanes over pairs of frame ids: the serial mix() chain was the
// most expensive part of reading a large trace.
// An inline compare: most calls find an equal stack of some 40 ids, where the library call
// to memcmp cost more than the comparison itself.
static bool same_frames(std::span<const FrameId> a, std::span<const FrameId> b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

static std::uint64_t hash_frames(std::span<const FrameId> frames) {
    constexpr std::uint64_t k = 0x9E3779B97F4A7C15ull;
    std::uint64_t lane[4] = {frames.size(), 0x243F6A8885A308D3ull, 0x13198A2E03707344ull,
                             0xA4093822299F31D0ull};
    std::size_t i = 0;
    for (; i + 8 <= frames.size(); i += 8)
        for (int l = 0; l < 4; ++l) {
            const std::uint64_t x = (static_cast<std::uint64_t>(frames[i + 2 * l].value) << 32) |
                                    frames[i + 2 * l + 1].value;
            lane[l] = (lane[l] ^ x) * k;
            lane[l] ^= lane[l] >> 29;
        }
    for (; i < frames.size(); ++i) lane[i & 3] = ((lane[i & 3] ^ frames[i].value) * k) ^ (lane[i & 3] >> 31);
    return mix(mix(lane[0], lane[1]), mix(lane[2], lane[3]));
}

StackId StackTable::intern(std::span<const FrameId> frames) {
    if (frames.empty()) return no_stack;
    const std::uint64_t h = hash_frames(frames);
    const std::size_t mask = index_.size() - 1;
    std::size_t at = h & mask;
    while (index_[at] != 0) {
        const StackId id(index_[at] - 1);
        if (hashes_[id.value] == h && same_frames(this->frames(id), frames)) return id;
        at = (at + 1) & mask;
    }
    frames_.insert(frames_.end(), frames.begin(), frames.end());
    offsets_.push_back(frames_.size());
    hashes_.push_back(h);
    const StackId id(static_cast<std::uint32_t>(offsets_.size() - 2));
    index_[at] = id.value + 1;
    if (2 * (id.value + 1) > index_.size()) grow_index();  // keep the load under one half
    return id;
}

std::string_view to_string(TraceAction action) {
    // Names by enumerator, in declaration order, as torch writes them.
    static constexpr std::string_view names[] = {
        "alloc",        "free_requested", "free_completed", "segment_alloc", "segment_free", "segment_map",
        "segment_unmap", "snapshot",      "oom",            "annotate",      "other"};
    return names[static_cast<std::size_t>(action)];
}

std::string_view to_string(BlockState state) {
    static constexpr std::string_view names[] = {"active_allocated", "active_pending_free", "inactive", "unknown"};
    return names[static_cast<std::size_t>(state)];
}

}  // namespace memsnap::snapshot
