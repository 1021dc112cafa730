#pragma once
// The typed snapshot model: every torch generation and both writers end up here. Strings,
// frames and stacks are interned once and referred to by small ids; segments, blocks and
// trace events are flat vectors. All byte counts are int64 so that diffs can go negative.

#include <memsnap/limits.hpp>
#include <memsnap/snapshot/detail/value_iterator.hpp>
#include <memsnap/util/id_index.hpp>
#include <memsnap/util/text_arena.hpp>

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::snapshot {

// A typed index into one of the model's tables, so that ids of different tables never mix
// (as heaptrack's indices do). Costs nothing over a bare integer.
template <class Tag>
struct Id {
    std::uint32_t value = 0;
    constexpr Id() = default;
    constexpr explicit Id(std::uint32_t v) : value(v) {}
    constexpr auto operator<=>(const Id&) const = default;
};

using StringId = Id<struct StringTag>;  // 0 is the empty string
using FrameId = Id<struct FrameTag>;
using StackId = Id<struct StackTag>;  // 0 is the empty stack (nothing recorded)
inline constexpr StackId no_stack{};

class StringTable {
  public:
    StringTable();
    // Copies rebuild the index: its keys are views into this table's own storage.
    StringTable(const StringTable& other);
    StringTable& operator=(const StringTable& other);
    StringTable(StringTable&&) = default;
    StringTable& operator=(StringTable&&) = default;
    StringId intern(std::string_view text);
    std::string_view view(StringId id) const { return strings_[id.value]; }
    std::size_t size() const { return strings_.size(); }

  private:
    util::TextArena text_;
    std::vector<std::string_view> strings_;  // into text_
    util::IdIndex index_;
};

struct Frame {
    StringId filename;
    StringId name;
    std::int64_t line = 0;
    bool operator==(const Frame&) const = default;
};

class FrameTable {
  public:
    FrameId intern(const Frame& frame);
    const Frame& operator[](FrameId id) const { return frames_[id.value]; }
    std::size_t size() const { return frames_.size(); }

  private:
    std::vector<Frame> frames_;
    util::IdIndex index_;
};

// Stacks are innermost frame first, as torch records them.
class StackTable {
  public:
    StackTable();
    StackId intern(std::span<const FrameId> frames);
    std::span<const FrameId> frames(StackId id) const {
        return {frames_.data() + offsets_[id.value], offsets_[id.value + 1] - offsets_[id.value]};
    }
    std::size_t size() const { return offsets_.size() - 1; }
    std::size_t frame_count() const { return frames_.size(); }  // over all stacks

  private:
    std::vector<FrameId> frames_;
    std::vector<std::size_t> offsets_;
    util::IdIndex index_;  // interning runs once per trace entry
};

enum class BlockState : std::uint8_t { active_allocated, active_pending_free, inactive, unknown };

struct Block {
    std::int64_t address = 0;
    std::int64_t size = 0;
    std::int64_t requested_size = 0;  // equals size when the capture did not record it
    StackId stack;
    std::uint32_t segment = 0;  // index into Snapshot::segments
    StringId state_name;        // as written ("active_awaiting_free" stays itself)
    BlockState state = BlockState::unknown;
    bool address_derived = false;  // torch <= 2.0: summed from the segment address
    bool live() const { return state == BlockState::active_allocated; }
    bool active() const { return state == BlockState::active_allocated || state == BlockState::active_pending_free; }
};

struct Segment {
    std::int32_t device = 0;
    std::int64_t address = 0;
    std::int64_t total_size = 0;
    std::int64_t stream = 0;
    StringId segment_type;  // "large" / "small"
    std::int64_t pool_id[2] = {0, 0};
    bool is_expandable = false;
    // Not recorded: holds the live blocks of a capture that records no segments (a torch 2.0
    // _memory_viz trace_plot page); its total_size is their sum, and no reserved total counts it.
    bool placeholder = false;
    StackId stack;
    std::uint32_t first_block = 0;
    std::uint32_t block_count = 0;
};

enum class TraceAction : std::uint8_t {
    alloc,
    free_requested,
    free_completed,
    segment_alloc,
    segment_free,
    segment_map,
    segment_unmap,
    snapshot,
    oom,
    annotate,
    other,  // kept by name; torch adds actions over time
};

// One trace entry as read (stored packed, see TraceEvents). Rare or repetitive fields live in
// side tables of the Snapshot: stream values, and the notes of the few events that have one.
struct TraceEvent {
    // Streams a trace can name (Snapshot::streams); more fold into entry 0, stream 0.
    static constexpr std::size_t max_streams = limits::trace_streams;

    std::int64_t addr = 0;  // for oom: the device_free bytes
    std::int64_t size = 0;
    std::int64_t time_us = -1;  // -1 when not recorded (before torch 2.2)
    StackId stack;
    std::int16_t device = 0;

    TraceAction action() const { return static_cast<TraceAction>(action_and_stream_ & 0xF); }
    std::size_t stream() const { return action_and_stream_ >> 4; }  // index into Snapshot::streams
    void set_action(TraceAction action) {
        action_and_stream_ = static_cast<std::uint16_t>((action_and_stream_ & ~0xFu) | static_cast<unsigned>(action));
    }
    void set_stream(std::size_t index) {  // index < max_streams
        action_and_stream_ = static_cast<std::uint16_t>((index << 4) | (action_and_stream_ & 0xFu));
    }

  private:
    std::uint16_t action_and_stream_ = static_cast<std::uint16_t>(TraceAction::other);
};
static_assert(sizeof(TraceEvent) == 32);
static_assert(static_cast<unsigned>(TraceAction::other) < 15);  // 15 marks a stored event kept whole

// A trace as stored: 16 bytes an event instead of a TraceEvent's 32, since the trace is most
// of a large capture's memory. Reads give TraceEvent values. What real events never have keeps
// the whole event in a side table, 32 bytes more, so every value reads back exactly: an
// address that is not a multiple of 512 (the allocator's alignment) or 2^47 or more from the
// trace's first address other than 0 (a process's addresses all lie below 2^47); a size that
// is negative, 16 MiB or more and not a multiple of 512, or 8 GiB or more; a time more than
// 134 s from the first recorded one among its 1,024 neighbours; a device or a stream index
// past 15; a stack id past 2^24; an OOM (its address field holds the free bytes).
class TraceEvents {
  public:
    using iterator = detail::ValueIterator<TraceEvents, TraceEvent>;
    using value_type = TraceEvent;
    using size_type = std::size_t;

    TraceEvents() = default;
    template <std::input_iterator It>
    TraceEvents(It first, It last) {
        if constexpr (std::sized_sentinel_for<It, It>) reserve(static_cast<std::size_t>(last - first));
        for (; first != last; ++first) push_back(*first);
    }
    TraceEvents(std::initializer_list<TraceEvent> events) : TraceEvents(events.begin(), events.end()) {}

    std::size_t size() const { return packed_.size(); }
    bool empty() const { return packed_.empty(); }
    std::size_t kept_whole() const { return whole_.size(); }  // events outside the packed range
    TraceEvent operator[](std::size_t i) const {
        const Packed& p = packed_[i];
        if ((p.meta & 0xF) == escaped) return whole_[p.place];
        TraceEvent e;
        const auto addr = static_cast<std::int64_t>(p.place) >> size_bits;  // sign-extends
        e.addr = addr == addr_zero ? 0 : addr_base_ + addr * addr_unit;
        const auto size = static_cast<std::int64_t>(p.place & size_mask);
        e.size = p.place & size_in_units ? (size & ~static_cast<std::int64_t>(size_in_units)) << 9 : size;
        const auto time = static_cast<std::int64_t>(p.meta) >> (64 - time_bits);  // sign-extends
        e.time_us = time == time_unrecorded ? -1 : chunk_time_[i >> chunk_bits] + time;
        e.stack = StackId(static_cast<std::uint32_t>(p.meta >> 12) & stack_mask);
        e.device = packed_device(p);
        e.set_action(packed_action(p));
        e.set_stream((p.meta >> 4) & 0xF);
        return e;
    }
    // The action and the device of event i alone, for passes over a whole trace that look at
    // nothing else (choosing a device, counting OOMs): no other field is decoded.
    TraceAction action_at(std::size_t i) const {
        const Packed& p = packed_[i];
        return (p.meta & 0xF) == escaped ? whole_[p.place].action() : packed_action(p);
    }
    std::int16_t device_at(std::size_t i) const {
        const Packed& p = packed_[i];
        return (p.meta & 0xF) == escaped ? whole_[p.place].device : packed_device(p);
    }
    TraceEvent front() const { return (*this)[0]; }
    TraceEvent back() const { return (*this)[size() - 1]; }
    iterator begin() const;
    iterator end() const;
    std::reverse_iterator<iterator> rbegin() const;
    std::reverse_iterator<iterator> rend() const;

    void reserve(std::size_t n) {
        packed_.reserve(n);
        chunk_time_.reserve((n >> chunk_bits) + 1);
    }
    void push_back(const TraceEvent& e) {
        packed_.emplace_back();
        set(packed_.size() - 1, e);
    }
    void set(std::size_t i, const TraceEvent& e);  // replaces event i
    void set_device(std::size_t i, std::int16_t device);
    void clear() {
        packed_.clear();
        whole_.clear();
        chunk_time_.clear();
        addr_base_ = 0;
        has_addr_base_ = false;
    }
    void shrink_to_fit() {
        packed_.shrink_to_fit();
        whole_.shrink_to_fit();
        chunk_time_.shrink_to_fit();
    }

  private:
    struct Packed {
        // The address less addr_base_ in units of 512 (39 bits, signed; addr_zero for 0)
        // above the size (25 bits: below 16 MiB in bytes, or in units of 512 with
        // size_in_units set); for an escaped event, its index in whole_.
        std::uint64_t place;
        // action (4 bits; `escaped`: the event is whole_[place]), stream (4), device (4), stack
        // (24), and time_us less its chunk's first recorded time (28, signed).
        std::uint64_t meta;
    };
    static_assert(sizeof(Packed) == 16);
    static TraceAction packed_action(const Packed& p) { return static_cast<TraceAction>(p.meta & 0xF); }
    static std::int16_t packed_device(const Packed& p) { return static_cast<std::int16_t>((p.meta >> 8) & 0xF); }
    static constexpr std::uint64_t escaped = 15;
    static constexpr unsigned size_bits = 25;
    static constexpr std::uint64_t size_mask = (std::uint64_t{1} << size_bits) - 1;
    static constexpr std::uint64_t size_in_units = std::uint64_t{1} << (size_bits - 1);
    static constexpr std::int64_t addr_unit = 512;                                      // the allocator's alignment
    static constexpr std::int64_t addr_span = std::int64_t{1} << (64 - size_bits - 1);  // in units, either side
    static constexpr std::int64_t addr_zero = -addr_span;                               // address 0, whatever the base
    static constexpr std::uint32_t stack_mask = (1u << 24) - 1;
    static constexpr unsigned time_bits = 28;
    static constexpr std::int64_t time_unrecorded = -(std::int64_t{1} << (time_bits - 1));
    static constexpr unsigned chunk_bits = 10;  // events sharing one time base
    static constexpr std::int64_t chunk_unset = std::numeric_limits<std::int64_t>::min();

    std::vector<Packed> packed_;
    std::vector<TraceEvent> whole_;
    // Per chunk of 2^chunk_bits events, the first recorded time set in it (chunk_unset before).
    std::vector<std::int64_t> chunk_time_;
    std::int64_t addr_base_ = 0;  // the first address other than 0 set
    bool has_addr_base_ = false;
};

static_assert(std::random_access_iterator<TraceEvents::iterator>);

inline TraceEvents::iterator TraceEvents::begin() const { return {this, 0}; }
inline TraceEvents::iterator TraceEvents::end() const { return {this, size()}; }
inline std::reverse_iterator<TraceEvents::iterator> TraceEvents::rbegin() const { return std::reverse_iterator(end()); }
inline std::reverse_iterator<TraceEvents::iterator> TraceEvents::rend() const { return std::reverse_iterator(begin()); }

// What few trace entries carry beyond a TraceEvent.
struct EventNote {
    std::uint64_t event = 0;  // index into Snapshot::events
    StringId compile_context;
    StringId user_metadata;
    StringId action_name;  // for TraceAction::other: the name torch wrote
};

struct Annotation {
    StringId name;
    StringId stage;
    std::int32_t device = 0;
    std::int64_t time_us = -1;
};

struct Source {
    std::string path;
    std::string encoding;  // "pickle" or "json"
    std::string writer;    // "Python pickle", "torch C++ pickler", "JSON"
    int protocol = 0;      // pickle protocol, 0 for JSON
    std::uint64_t file_bytes = 0;
    std::uint64_t trailing_bytes = 0;   // after STOP
    std::string generation;             // e.g. "torch 2.0 (block history)"
    std::vector<std::string> features;  // keys that decided the generation
};

struct Snapshot {
    Source source;
    StringTable strings;
    FrameTable frames;
    StackTable stacks;
    std::vector<Segment> segments;         // in file order (torch sorts by address)
    std::vector<Block> blocks;             // grouped by segment, address order within it
    TraceEvents events;                    // per device, oldest first
    std::vector<std::int64_t> streams{0};  // TraceEvent::stream() values
    std::vector<EventNote> event_notes;    // by event index, only the events that have one
    std::vector<Annotation> annotations;
    // allocator_settings rendered as (key, JSON text) in file order.
    std::vector<std::pair<std::string, std::string>> allocator_settings;
    bool has_allocator_settings = false;
    std::vector<std::string> top_level_keys;  // sorted; empty for a segments-only list
    bool segments_only = false;
    std::size_t trace_devices = 0;  // len(device_traces)
    bool has_history = false;       // torch <= 2.0 blocks
    // What does not add up in the file, with counts: it was read, and this is what a reader
    // should know about it (negative sizes counted as 0, blocks that overlap, ...).
    std::vector<std::string> warnings;

    std::span<const Block> blocks_of(const Segment& s) const { return {blocks.data() + s.first_block, s.block_count}; }
    std::string_view str(StringId id) const { return strings.view(id); }
    const EventNote* note_of(std::size_t event) const;
    // The action as torch wrote it, for events[event].
    std::string_view action_name(std::size_t event) const;
    std::int64_t stream_of(const TraceEvent& e) const { return streams[e.stream()]; }
};

std::string_view to_string(TraceAction action);
std::string_view to_string(BlockState state);

}  // namespace memsnap::snapshot

template <class Tag>
struct std::hash<memsnap::snapshot::Id<Tag>> {
    std::size_t operator()(memsnap::snapshot::Id<Tag> id) const noexcept { return id.value; }
};
