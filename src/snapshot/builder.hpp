#pragma once
// Internal: turns a decoded Document into a Snapshot. Two halves:
//  - a SealHook that recognises frames, stacks, blocks and trace entries by their keys as the
//    pickle machine completes them, so the bulk of a large file never exists as generic values;
//  - a walk over what remains (root, segments, settings) that assembles the model.

#include <memsnap/limits.hpp>
#include <memsnap/pickle/document.hpp>
#include <memsnap/snapshot/model.hpp>
#include <memsnap/util/id_index.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::snapshot::detail {

// What a builder made of a string of the input, remembered by the string's position: Python
// shares one string object per key, action or file name, so the same bytes come back
// millions of times and are looked at once. 2^Bits entries, direct-mapped or (Ways 2) in
// pairs, a string in either entry of its pair, the older of the two giving way: a collision
// costs a recomputation, never a wrong value.
template <class T, unsigned Bits, unsigned Ways = 1>
class ByInputPosition {
    static_assert(Ways == 1 || Ways == 2);
    static_assert(Bits >= Ways - 1);

  public:
    // The value for `text` (a string read from the input), made by `make` when not known.
    template <class Make>
    T get(const pickle::Value& text, Make&& make) {
        const std::size_t at = (text.u * 0x9E3779B97F4A7C15ull) >> (64 - Bits);
        if constexpr (Ways == 2) {
            // A pair, not an entry and its neighbour: two strings whose homes were neighbours
            // each overwrote the other's entry on every miss, and so missed every time.
            Entry& first = entries_[at & ~std::size_t{1}];
            Entry& second = entries_[at | 1];
            if (first.holds(text)) return first.value;
            if (second.holds(text)) return second.value;
            second = first;
            first = {text.u, text.length, true, make()};
            return first.value;
        } else {
            Entry& only = entries_[at];
            if (!only.holds(text)) only = {text.u, text.length, true, make()};
            return only.value;
        }
    }

  private:
    struct Entry {
        std::uint64_t offset = 0;
        std::uint32_t length = 0;
        bool valid = false;
        T value{};
        bool holds(const pickle::Value& text) const { return valid && offset == text.u && length == text.length; }
    };
    std::array<Entry, std::size_t{1} << Bits> entries_{};
};

// What a builder made of a short string, remembered by its bytes: a writer that does not share
// string objects repeats "free_completed" or "N/A" in full at every trace entry, each time at
// a new position. Direct-mapped on 2^Bits entries; the key holds every byte of the string, so
// a hit is exact and a collision costs a recomputation.
template <class T, unsigned Bits>
class ByShortText {
  public:
    static constexpr std::size_t max_length = 16;

    // The value for `text` (at most max_length bytes), made by `make` when not known.
    template <class Make>
    T get(std::string_view text, Make&& make) {
        const Key key = key_of(text);
        const std::uint64_t mixed =
            (key.head * 0x9E3779B97F4A7C15ull) ^ (key.tail * 0xC2B2AE3D27D4EB4Full) ^ key.length;
        Entry& e = entries_[(mixed * 0x9E3779B97F4A7C15ull) >> (64 - Bits)];
        if (!e.valid || e.key.head != key.head || e.key.tail != key.tail || e.key.length != key.length)
            e = {key, true, make()};
        return e.value;
    }

  private:
    struct Key {
        std::uint64_t head = 0, tail = 0;  // the first and the last 8 bytes (overlapping), or all in head
        std::size_t length = 0;
    };
    static Key key_of(std::string_view text) {
        Key k;
        k.length = text.size();
        if (text.size() >= 8) {
            std::memcpy(&k.head, text.data(), 8);
            std::memcpy(&k.tail, text.data() + text.size() - 8, 8);
        } else {
            for (std::size_t i = 0; i < text.size(); ++i)
                k.head |= static_cast<std::uint64_t>(static_cast<unsigned char>(text[i])) << (8 * i);
        }
        return k;
    }
    struct Entry {
        Key key;
        bool valid = false;
        T value{};
    };
    std::array<Entry, std::size_t{1} << Bits> entries_{};
};

enum OpaqueTag : std::uint16_t {
    tag_frame = 1,
    tag_stack = 2,
    tag_block = 3,
    tag_event = 4,
    tag_segment = 5,
    tag_consumed = 6  // what a used-up container reads as afterwards
};

class ModelBuilder : public pickle::SealHook {
  public:
    explicit ModelBuilder(Snapshot& out) : out_(out) {}

    std::optional<pickle::Value> on_seal(const pickle::Document& doc, const pickle::Value& container) override;
    int run_tag() const override { return tag_event; }
    void after_replace(pickle::Document& doc, const pickle::Value& container,
                       const pickle::Value& replacement) override;
    std::optional<pickle::Value> on_dict_literal(const pickle::Document& doc,
                                                 std::span<const pickle::Value> kv) override;
    std::optional<pickle::Value> on_list_literal(const pickle::Document& doc,
                                                 std::span<const pickle::Value> items) override;

    // Reserves address space for the trace entries a file of this size may hold, so the
    // vector never doubles (and copies) while a large capture is read. Untouched reserved
    // pages cost no memory.
    void expect_input_bytes(std::size_t bytes) {
        // Capped, so that a huge file cannot ask for more address space than the machine
        // will grant at once; past the cap the vector grows as usual.
        pending_events_.reserve(std::min<std::size_t>(bytes / 48 + 16, std::size_t{32} << 20));
    }

    // Assembles segments, blocks and traces from the root. Throws Error (input) on data that
    // is not a snapshot; `name` goes into the message.
    void finish(const pickle::Document& doc, const std::string& name);

  private:
    std::optional<pickle::Value> make_frame(const pickle::Document& doc, const pickle::Value& d);
    std::optional<pickle::Value> make_stack(std::span<const pickle::Value> items);
    std::optional<pickle::Value> make_block(const pickle::Document& doc, const pickle::Value& d);
    std::optional<pickle::Value> make_segment(const pickle::Document& doc, const pickle::Value& d);
    // Takes the blocks of a segment dict's list; "" or why they are not a segment's blocks.
    std::string claim_blocks(const pickle::Document& doc, const pickle::Value& list, Segment& s);
    std::optional<pickle::Value> make_event(const pickle::Document& doc, std::span<const pickle::Value> kv);
    StackId stack_of(const pickle::Document& doc, const pickle::Value* frames);
    StringId intern(const pickle::Document& doc, const pickle::Value* v);

    void read_segments(const pickle::Document& doc, const pickle::Value& list, const std::string& name);
    void read_traces(const pickle::Document& doc, const pickle::Value& list, const std::string& name);
    // Puts the listed segments (and only their blocks) in list order.
    void order_segments(const std::vector<std::uint32_t>& listed);
    // Counts what does not add up (warnings) and refuses sizes no GPU has.
    void validate(const std::string& name);
    void read_annotations(const pickle::Document& doc, const pickle::Value& list);
    void read_settings(const pickle::Document& doc, const pickle::Value& dict);
    void name_generation();

    Snapshot& out_;
    // Blocks and segments go straight into out_ as they are sealed; these say which blocks a
    // segment claimed, which segments the 'segments' list named, and why a segment dict
    // could not be read (rare).
    std::vector<std::uint8_t> block_claimed_;
    std::vector<std::uint8_t> segment_listed_;
    std::map<std::uint32_t, std::string> segment_problems_;
    std::uint64_t unreadable_frames_ = 0, unreadable_stacks_ = 0, bad_annotations_ = 0;
    TraceEvents pending_events_;
    std::vector<EventNote> pending_notes_;  // EventNote::event indexes pending_events_
    StringId no_compile_context_;           // torch's "N/A", once seen
    std::vector<FrameId> scratch_frames_;
    // Strings of the input by position (see ByInputPosition).
    ByInputPosition<StringId, 8> string_ids_;
    // The same for strings of the document's arena: a JSON dump names hundreds of files and
    // functions in turn, each a new string every time.
    ByInputPosition<StringId, 12> owned_string_ids_;
    ByShortText<StringId, 8> short_string_ids_;
    // Long strings by position, exactly: a few long file names referenced in turn by many
    // frames would otherwise be hashed in full at every reference.
    util::IdIndex long_string_index_;
    std::vector<std::pair<std::uint64_t, StringId>> long_strings_;  // (input offset, id)
    // A trace entry's keys and action names, remembered (see event_field_of, action_of).
    inline std::uint8_t event_field_of(const pickle::Document& doc, const pickle::Value& key);
    TraceAction action_of(StringId name, const pickle::Document& doc, const pickle::Value& text);
    // 128 pairs: two of a trace entry's keys that met in one entry (by chance, in one capture
    // of three) evicted each other at every trace entry, and so did two in neighbouring
    // entries of 64 before the entries were paired (a 400 MiB capture read 9% slower than the
    // same one with its strings elsewhere). The ten or so keys put three in one of 128 pairs
    // with chance under 1%.
    ByInputPosition<std::uint8_t, 8, 2> key_fields_;
    std::vector<std::pair<StringId, TraceAction>> action_kinds_;
    // Small side tables of TraceEvent: value -> index.
    std::uint16_t stream_index(std::int64_t stream);
    util::IdIndex stream_index_;  // into out_.streams, by a seeded hash (values come from the file)
    std::int64_t last_stream_ = 0;
    std::uint16_t last_stream_index_ = 0;
    // Which keys were seen: they decide the generation label.
    bool seen_block_address_ = false, seen_block_history_ = false, seen_block_frames_ = false,
         seen_block_requested_ = false, seen_time_us_ = false, seen_compile_context_ = false,
         seen_user_metadata_ = false, seen_pool_id_ = false, seen_forward_frames_ = false, seen_expandable_ = false,
         seen_cpp_frames_ = false;
};

// What one rendering may still spend: values and bytes of text (memo sharing lets a small
// pickle describe a huge tree).
struct RenderBudget {
    std::size_t values = limits::settings_values;
    std::size_t bytes = limits::settings_bytes;
};
constexpr std::size_t kMaxSettings = limits::settings_keys;

// Renders any value as compact JSON text (for settings), depth-bounded; past the budget,
// values render as "...".
std::string value_to_json(const pickle::Document& doc, const pickle::Value& v, RenderBudget& budget, int depth = 0);

}  // namespace memsnap::snapshot::detail
