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
        index_.emplace(strings_[i], static_cast<StringId>(i));
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
    const auto id = static_cast<StringId>(strings_.size() - 1);
    index_.emplace(strings_.back(), id);
    return id;
}

FrameId FrameTable::intern(const Frame& frame) {
    const std::uint64_t h =
        mix(mix(mix(0, frame.filename), frame.name), static_cast<std::uint64_t>(frame.line));
    auto& bucket = index_[h];
    for (FrameId id : bucket)
        if (frames_[id] == frame) return id;
    frames_.push_back(frame);
    const auto id = static_cast<FrameId>(frames_.size() - 1);
    bucket.push_back(id);
    return id;
}

StackTable::StackTable() { offsets_ = {0, 0}; }  // stack 0: empty

StackId StackTable::intern(std::span<const FrameId> frames) {
    if (frames.empty()) return 0;
    std::uint64_t h = frames.size();
    for (FrameId f : frames) h = mix(h, f);
    auto& bucket = index_[h];
    for (StackId id : bucket) {
        const auto existing = this->frames(id);
        if (std::equal(existing.begin(), existing.end(), frames.begin(), frames.end())) return id;
    }
    frames_.insert(frames_.end(), frames.begin(), frames.end());
    offsets_.push_back(frames_.size());
    const auto id = static_cast<StackId>(offsets_.size() - 2);
    bucket.push_back(id);
    return id;
}

std::string_view to_string(TraceAction action) {
    switch (action) {
        case TraceAction::alloc: return "alloc";
        case TraceAction::free_requested: return "free_requested";
        case TraceAction::free_completed: return "free_completed";
        case TraceAction::segment_alloc: return "segment_alloc";
        case TraceAction::segment_free: return "segment_free";
        case TraceAction::segment_map: return "segment_map";
        case TraceAction::segment_unmap: return "segment_unmap";
        case TraceAction::snapshot: return "snapshot";
        case TraceAction::oom: return "oom";
        case TraceAction::annotate: return "annotate";
        case TraceAction::other: return "other";
    }
    return "other";
}

std::string_view to_string(BlockState state) {
    switch (state) {
        case BlockState::active_allocated: return "active_allocated";
        case BlockState::active_pending_free: return "active_pending_free";
        case BlockState::inactive: return "inactive";
        case BlockState::unknown: return "unknown";
    }
    return "unknown";
}

}  // namespace memsnap::snapshot
