#include <memsnap/snapshot/model.hpp>
#include <memsnap/util/hash.hpp>

#include <algorithm>

namespace memsnap::snapshot {

StringTable::StringTable() { intern(""); }

StringTable::StringTable(const StringTable& other) {
    for (const auto text : other.strings_) intern(text);
}

StringTable& StringTable::operator=(const StringTable& other) {
    if (this != &other) {
        StringTable copy(other);
        *this = std::move(copy);
    }
    return *this;
}

StringId StringTable::intern(std::string_view text) {
    const std::uint64_t h = util::hash_text(text);
    if (const auto id = index_.find(h, [&](std::uint32_t i) { return strings_[i] == text; })) return StringId(*id);
    const StringId id(static_cast<std::uint32_t>(strings_.size()));
    strings_.push_back(text_.store(text));
    index_.insert(h, id.value);
    return id;
}

FrameId FrameTable::intern(const Frame& frame) {
    const std::uint64_t h =
        util::mix_hash(util::mix_hash(util::mix_hash(util::hash_seed(), frame.filename.value), frame.name.value),
                       static_cast<std::uint64_t>(frame.line));
    if (const auto id = index_.find(h, [&](std::uint32_t i) { return frames_[i] == frame; })) return FrameId(*id);
    const FrameId id(static_cast<std::uint32_t>(frames_.size()));
    frames_.push_back(frame);
    index_.insert(h, id.value);
    return id;
}

StackTable::StackTable() {
    offsets_ = {0, 0};  // stack 0: empty
}

namespace {

// An inline compare: most calls find an equal stack of some 40 ids, where the library call
// to memcmp cost more than the comparison itself.
bool same_frames(std::span<const FrameId> a, std::span<const FrameId> b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

// Four independent multiply lanes over pairs of frame ids, seeded: a serial chain was the
// most expensive part of reading a large trace.
std::uint64_t hash_frames(std::span<const FrameId> frames) {
    constexpr std::uint64_t k = 0x9E3779B97F4A7C15ull;
    const std::uint64_t seed = util::hash_seed();
    std::uint64_t lane[4] = {seed ^ frames.size(), seed ^ 0x243F6A8885A308D3ull, seed ^ 0x13198A2E03707344ull,
                             seed ^ 0xA4093822299F31D0ull};
    std::size_t i = 0;
    for (; i + 8 <= frames.size(); i += 8)
        for (int l = 0; l < 4; ++l) {
            const std::uint64_t x =
                (static_cast<std::uint64_t>(frames[i + 2 * static_cast<std::size_t>(l)].value) << 32) |
                frames[i + 2 * static_cast<std::size_t>(l) + 1].value;
            lane[l] = (lane[l] ^ x) * k;
            lane[l] ^= lane[l] >> 29;
        }
    for (; i < frames.size(); ++i) lane[i & 3] = ((lane[i & 3] ^ frames[i].value) * k) ^ (lane[i & 3] >> 31);
    return util::mix_hash(util::mix_hash(lane[0], lane[1]), util::mix_hash(lane[2], lane[3]));
}

}  // namespace

StackId StackTable::intern(std::span<const FrameId> frames) {
    if (frames.empty()) return no_stack;
    const std::uint64_t h = hash_frames(frames);
    if (const auto id = index_.find(h, [&](std::uint32_t i) { return same_frames(this->frames(StackId(i)), frames); }))
        return StackId(*id);
    frames_.insert(frames_.end(), frames.begin(), frames.end());
    offsets_.push_back(frames_.size());
    const StackId id(static_cast<std::uint32_t>(offsets_.size() - 2));
    index_.insert(h, id.value);
    return id;
}

const EventNote* Snapshot::note_of(std::size_t event) const {
    const auto it = std::ranges::lower_bound(event_notes, std::uint64_t{event}, {}, &EventNote::event);
    return it != event_notes.end() && it->event == event ? &*it : nullptr;
}

std::string_view Snapshot::action_name(std::size_t event) const {
    const TraceAction action = events[event].action();
    if (action != TraceAction::other) return to_string(action);
    const EventNote* note = note_of(event);
    return note != nullptr ? str(note->action_name) : std::string_view{};
}

std::string_view to_string(TraceAction action) {
    // Names by enumerator, in declaration order, as torch writes them.
    static constexpr std::string_view names[] = {"alloc",        "free_requested", "free_completed", "segment_alloc",
                                                 "segment_free", "segment_map",    "segment_unmap",  "snapshot",
                                                 "oom",          "annotate",       "other"};
    return names[static_cast<std::size_t>(action)];
}

std::string_view to_string(BlockState state) {
    static constexpr std::string_view names[] = {"active_allocated", "active_pending_free", "inactive", "unknown"};
    return names[static_cast<std::size_t>(state)];
}

}  // namespace memsnap::snapshot
