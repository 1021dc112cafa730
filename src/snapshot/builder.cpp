#include "builder.hpp"

#include <memsnap/error.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/hash.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace memsnap::snapshot::detail {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

namespace {

[[gnu::always_inline]] inline std::optional<std::int64_t> as_int(const Value* v) {
    if (v == nullptr) return std::nullopt;
    if (v->kind == Kind::integer) return v->i;
    if (v->kind == Kind::big_integer) return static_cast<std::int64_t>(v->u);  // stream ids
    if (v->kind == Kind::boolean) return v->i;
    return std::nullopt;
}

bool is_string(const Value* v) { return v != nullptr && v->kind == Kind::string; }

// A byte count: an int that fits int64 (a LONG beyond it is no size any GPU has).
inline std::optional<std::int64_t> as_size(const Value* v) {
    if (v == nullptr || v->kind == Kind::big_integer) return std::nullopt;
    return as_int(v);
}

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::none:
            return "None";
        case Kind::boolean:
            return "a bool";
        case Kind::integer:
        case Kind::big_integer:
            return "an int";
        case Kind::floating:
            return "a float";
        case Kind::string:
            return "a str";
        case Kind::bytes:
            return "a bytes value";
        case Kind::list:
            return "a list";
        case Kind::dict:
            return "a dict";
        case Kind::tuple:
            return "a tuple";
        case Kind::set:
            return "a set";
        case Kind::opaque:
        case Kind::run:
            return "a record";
        case Kind::unset:
            return "nothing";
    }
    return "a value";
}

BlockState parse_state(std::string_view s) {
    if (s == "active_allocated") return BlockState::active_allocated;
    // torch writes active_pending_free; newer docs call the same state active_awaiting_free.
    if (s == "active_pending_free" || s == "active_awaiting_free") return BlockState::active_pending_free;
    if (s == "inactive") return BlockState::inactive;
    return BlockState::unknown;
}

TraceAction parse_action(std::string_view s) {
    static const std::pair<std::string_view, TraceAction> table[] = {
        {"alloc", TraceAction::alloc},
        {"free_requested", TraceAction::free_requested},
        {"free_completed", TraceAction::free_completed},
        {"segment_alloc", TraceAction::segment_alloc},
        {"segment_free", TraceAction::segment_free},
        {"segment_map", TraceAction::segment_map},
        {"segment_unmap", TraceAction::segment_unmap},
        {"snapshot", TraceAction::snapshot},
        {"oom", TraceAction::oom},
        {"annotate", TraceAction::annotate},
    };
    for (const auto& [name, action] : table)
        if (name == s) return action;
    return TraceAction::other;
}

}  // namespace

StringId ModelBuilder::intern(const Document& doc, const Value* v) {
    if (!is_string(v)) return StringId{};
    // Not in the input: the JSON reader's arena, which stores a repeated string once, so its
    // position names it as well.
    if ((v->flags & 1) != 0) return owned_string_ids_.get(*v, [&] { return out_.strings.intern(doc.text(*v)); });
    return string_ids_.get(*v, [&] {
        if (v->length <= short_string_ids_.max_length) {
            const auto text = doc.text(*v);
            return short_string_ids_.get(text, [&] { return out_.strings.intern(text); });
        }
        if (v->length < 64) return out_.strings.intern(doc.text(*v));
        const std::uint64_t h = util::mix_hash(util::hash_seed(), v->u);
        const auto offset = v->u;
        if (const auto found =
                long_string_index_.find(h, [&](std::uint32_t i) { return long_strings_[i].first == offset; }))
            return long_strings_[*found].second;
        const StringId id = out_.strings.intern(doc.text(*v));
        long_string_index_.insert(h, static_cast<std::uint32_t>(long_strings_.size()));
        long_strings_.emplace_back(offset, id);
        return id;
    });
}

std::optional<Value> ModelBuilder::on_seal(const Document& doc, const Value& c) {
    if (c.kind == Kind::dict) {
        // Trace entries dominate large files: make_event looks at the keys once and says no
        // quickly to anything without an "action".
        if (auto v = make_event(doc, doc.items(c))) return v;
        bool has_filename = false, has_state = false, has_blocks = false;
        const auto& kv = doc.items(c);
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
            if (kv[i].kind != Kind::string) continue;
            const auto key = doc.text(kv[i]);
            if (key == "filename")
                has_filename = true;
            else if (key == "state")
                has_state = true;
            else if (key == "blocks")
                has_blocks = true;
        }
        if (has_filename) return make_frame(doc, c);
        if (has_state) return make_block(doc, c);
        if (has_blocks) return make_segment(doc, c);
        return std::nullopt;
    }
    if (c.kind == Kind::list) return make_stack(doc.items(c));
    return std::nullopt;
}

void ModelBuilder::after_replace(Document& doc, const Value& c, const Value& replacement) {
    // A segment's blocks list and a block's history are read in full once the segment or
    // block is: they are consumed, so they neither stay in memory nor can be read twice.
    if (replacement.tag != tag_segment && replacement.tag != tag_block) return;
    const Value tombstone = Value::make_opaque(tag_consumed, 0);
    for (const char* key : {"blocks", "history"}) {
        const Value* child = doc.find(c, key);
        if (child == nullptr || !child->is_container()) continue;
        for (const Value& item : doc.items(*child)) doc.consume(item, tombstone);
        doc.consume(*child, tombstone);
    }
}

std::optional<Value> ModelBuilder::make_frame(const Document& doc, const Value& d) {
    const Value* filename = nullptr;
    const Value* name = nullptr;
    const Value* line_value = nullptr;
    const auto& kv = doc.items(d);
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
        if (kv[i].kind != Kind::string) continue;
        const auto key = doc.text(kv[i]);
        if (key == "filename")
            filename = &kv[i + 1];
        else if (key == "name")
            name = &kv[i + 1];
        else if (key == "line")
            line_value = &kv[i + 1];
    }
    const auto line = as_int(line_value);
    if (!is_string(filename) || !is_string(name) || !line) {
        ++unreadable_frames_;
        return std::nullopt;
    }
    const FrameId id = out_.frames.intern(Frame{intern(doc, filename), intern(doc, name), *line});
    return Value::make_opaque(tag_frame, id.value);
}

std::optional<Value> ModelBuilder::on_list_literal(const Document&, std::span<const Value> items) {
    return make_stack(items);
}

std::optional<Value> ModelBuilder::make_stack(std::span<const Value> items) {
    if (items.empty()) return std::nullopt;
    scratch_frames_.resize(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const Value& item = items[i];
        if (item.kind != Kind::opaque || item.tag != tag_frame) return std::nullopt;
        scratch_frames_[i] = FrameId(static_cast<std::uint32_t>(item.u));
    }
    return Value::make_opaque(tag_stack, out_.stacks.intern(scratch_frames_).value);
}

StackId ModelBuilder::stack_of(const Document&, const Value* frames) {
    if (frames != nullptr && frames->kind == Kind::opaque && frames->tag == tag_stack)
        return StackId(static_cast<std::uint32_t>(frames->u));
    return no_stack;
}

std::optional<Value> ModelBuilder::make_block(const Document& doc, const Value& d) {
    const auto size = as_size(doc.find(d, "size"));
    const Value* state = doc.find(d, "state");
    if (!size || !is_string(state)) return std::nullopt;
    Block b;
    b.size = *size;
    b.state_name = intern(doc, state);
    b.state = parse_state(doc.text(*state));
    if (const auto address = as_int(doc.find(d, "address"))) {
        b.address = *address;
        seen_block_address_ = true;
    } else {
        b.address_derived = true;
    }
    const auto requested = as_size(doc.find(d, "requested_size"));
    if (requested) seen_block_requested_ = true;
    b.requested_size = requested.value_or(b.size);
    if (const Value* frames = doc.find(d, "frames")) {
        seen_block_frames_ = true;
        b.stack = stack_of(doc, frames);
        if (b.stack == no_stack && !doc.items(*frames).empty()) ++unreadable_stacks_;
    }
    if (const Value* history = doc.find(d, "history")) {
        seen_block_history_ = true;
        // torch <= 2.0: the allocation's stack and request size live in history[0].
        const auto& entries = doc.items(*history);
        if (!entries.empty()) {
            const Value& first = entries.front();
            if (b.stack == no_stack) b.stack = stack_of(doc, doc.find(first, "frames"));
            if (!requested)
                if (const auto real = as_int(doc.find(first, "real_size"))) b.requested_size = *real;
            if (doc.find(first, "cpp_frames") != nullptr) seen_cpp_frames_ = true;
        }
    }
    out_.blocks.push_back(b);
    block_claimed_.push_back(0);
    return Value::make_opaque(tag_block, out_.blocks.size() - 1);
}

std::string ModelBuilder::claim_blocks(const Document& doc, const Value& list, Segment& s) {
    const auto& items = doc.items(list);
    // The common case: the blocks sealed just before, in order, claimed by nobody yet.
    bool in_place = true;
    for (std::size_t j = 0; j < items.size(); ++j) {
        const Value& item = items[j];
        if (item.kind != Kind::opaque || item.tag != tag_block)
            return fmt::format("block {} is not a block (it needs an integer 'size' and a string 'state')", j);
        if (block_claimed_[item.u])
            return fmt::format(
                "block {} is the same object as a block already in a segment: a snapshot never "
                "shares blocks",
                j);
        block_claimed_[item.u] = 1;
        in_place = in_place && item.u == items.front().u + j;
    }
    s.first_block = static_cast<std::uint32_t>(items.empty() ? out_.blocks.size() : items.front().u);
    if (!in_place) {
        s.first_block = static_cast<std::uint32_t>(out_.blocks.size());
        for (const Value& item : items) {
            out_.blocks.push_back(out_.blocks[item.u]);
            block_claimed_.push_back(1);
        }
    }
    s.block_count = static_cast<std::uint32_t>(items.size());
    // torch <= 2.0 blocks carry no address: they follow each other from the segment's.
    std::int64_t next_address = s.address;
    for (std::uint32_t k = s.first_block; k < s.first_block + s.block_count; ++k) {
        Block& b = out_.blocks[k];
        if (b.address_derived) b.address = next_address;
        const auto next = util::checked_add(b.address, std::max<std::int64_t>(b.size, 0));
        if (!next) return "has blocks whose addresses and sizes run past 2^63";
        next_address = *next;
    }
    return {};
}

std::optional<Value> ModelBuilder::make_segment(const Document& doc, const Value& d) {
    Segment s;
    std::string problem;
    const Value* blocks = doc.find(d, "blocks");
    const auto address = as_int(doc.find(d, "address"));
    const auto total = as_size(doc.find(d, "total_size"));
    const auto device = as_int(doc.find(d, "device")).value_or(0);
    if (blocks == nullptr || doc.resolve(*blocks).kind != Kind::list)
        problem = "has no 'blocks' list";
    else if (!address)
        problem = "has no integer 'address'";
    else if (!total)
        problem = "has no 'total_size' that is a byte count below 2^63";
    else if (device < 0 || device > 0xFFFF)
        problem = fmt::format("names device {}, which is not a device index", device);
    if (problem.empty()) {
        s.device = static_cast<std::int32_t>(device);
        s.address = *address;
        s.total_size = *total;
        s.stream = as_int(doc.find(d, "stream")).value_or(0);
        s.segment_type = intern(doc, doc.find(d, "segment_type"));
        if (const auto* expandable = doc.find(d, "is_expandable")) {
            seen_expandable_ = true;
            s.is_expandable = as_int(expandable).value_or(0) != 0;
        }
        if (const Value* pool = doc.find(d, "segment_pool_id")) {
            const auto& ids = doc.items(*pool);
            for (std::size_t k = 0; k < 2 && k < ids.size(); ++k) s.pool_id[k] = as_int(&ids[k]).value_or(0);
        }
        s.stack = stack_of(doc, doc.find(d, "frames"));
        problem = claim_blocks(doc, *blocks, s);
    }
    const auto index = static_cast<std::uint32_t>(out_.segments.size());
    if (!problem.empty()) segment_problems_[index] = problem;
    out_.segments.push_back(s);
    segment_listed_.push_back(0);
    return Value::make_opaque(tag_segment, index);
}

namespace {

// The keys of a trace entry, by the field they fill.
enum EventField : std::uint8_t {
    no_field,
    f_action,
    f_addr,
    f_size,
    f_stream,
    f_frames,
    f_time_us,
    f_device_free,
    f_user_metadata,
    f_compile_context,
    f_pool_id,
    f_forward_frames,
    event_field_count
};

EventField event_field(std::string_view key) {
    switch (key.size()) {  // length first: most keys differ there
        case 4:
            return key == "addr" ? f_addr : key == "size" ? f_size : no_field;
        case 6:
            return key == "action" ? f_action : key == "stream" ? f_stream : key == "frames" ? f_frames : no_field;
        case 7:
            return key == "time_us" ? f_time_us : key == "pool_id" ? f_pool_id : no_field;
        case 11:
            return key == "device_free" ? f_device_free : no_field;
        case 13:
            return key == "user_metadata" ? f_user_metadata : no_field;
        case 14:
            return key == "forward_frames" ? f_forward_frames : no_field;
        case 15:
            return key == "compile_context" ? f_compile_context : no_field;
        default:
            return no_field;
    }
}

// torch's "N/A", compared inline. Trace entries that share their "N/A" strings read bytes far
// back in the input; compared through a call to memcmp, such a capture took about 6% more CPU
// time to read.
bool is_no_compile_context(std::string_view text) {
    return text.size() == 3 && text[0] == 'N' && text[1] == '/' && text[2] == 'A';
}

}  // namespace

std::optional<Value> ModelBuilder::on_dict_literal(const Document& doc, std::span<const Value> kv) {
    return make_event(doc, kv);
}

// Every trace entry names its keys by the same input bytes: a key is compared once.
[[gnu::always_inline]] inline std::uint8_t ModelBuilder::event_field_of(const Document& doc, const Value& key) {
    if ((key.flags & 1) != 0) return event_field(doc.text(key));  // not in the input
    return key_fields_.get(key, [&] { return static_cast<std::uint8_t>(event_field(doc.text(key))); });
}

std::optional<Value> ModelBuilder::make_event(const Document& doc, std::span<const Value> kv) {
    // Into named pointers, not an array indexed by field: reading such an array back right
    // after storing to it at computed places stalled the core on every entry.
    const Value *action = nullptr, *addr = nullptr, *device_free = nullptr, *size = nullptr, *stream = nullptr,
                *time_us = nullptr, *frames = nullptr, *compile_context = nullptr, *user_metadata = nullptr;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
        if (kv[i].kind != Kind::string) continue;
        const Value* value = &kv[i + 1];
        switch (event_field_of(doc, kv[i])) {
            case f_action:
                action = value;
                break;
            case f_addr:
                addr = value;
                break;
            case f_size:
                size = value;
                break;
            case f_stream:
                stream = value;
                break;
            case f_frames:
                frames = value;
                break;
            case f_time_us:
                time_us = value;
                break;
            case f_device_free:
                device_free = value;
                break;
            case f_user_metadata:
                user_metadata = value;
                break;
            case f_compile_context:
                compile_context = value;
                break;
            case f_pool_id:
                seen_pool_id_ = true;
                break;
            case f_forward_frames:
                seen_forward_frames_ = true;
                break;
            default:
                break;
        }
    }
    if (!is_string(action)) return std::nullopt;
    TraceEvent e;
    const StringId action_name = intern(doc, action);
    e.set_action(action_of(action_name, doc, *action));
    if (const auto a = as_int(addr))
        e.addr = *a;
    else if (const auto free = as_int(device_free))
        e.addr = *free;
    e.size = as_int(size).value_or(0);
    e.set_stream(stream_index(as_int(stream).value_or(0)));
    if (const auto t = as_int(time_us)) {
        e.time_us = *t;
        seen_time_us_ = true;
    }
    e.stack = stack_of(doc, frames);
    EventNote note;
    note.event = pending_events_.size();
    if (e.action() == TraceAction::other) note.action_name = action_name;
    // torch 2.5 on writes both on every entry, "N/A" and "" when nothing was set: notes of
    // those would say nothing and cost 24 bytes an entry, more than the entry's own 16.
    // The empty string is StringId{} already. "N/A" is interned once; after that it is
    // recognised by its bytes, not looked up: some writers make it a new string at every entry,
    // which no lookup by position finds.
    if (compile_context != nullptr) {
        seen_compile_context_ = true;
        const bool known_none = no_compile_context_ != StringId{} && is_string(compile_context) &&
                                is_no_compile_context(doc.text(*compile_context));
        if (!known_none) {
            const StringId id = intern(doc, compile_context);
            if (is_no_compile_context(out_.strings.view(id)))
                no_compile_context_ = id;
            else
                note.compile_context = id;
        }
    }
    if (user_metadata != nullptr) {
        seen_user_metadata_ = true;
        note.user_metadata = intern(doc, user_metadata);
    }
    if (note.compile_context != StringId{} || note.user_metadata != StringId{} || e.action() == TraceAction::other)
        pending_notes_.push_back(note);
    pending_events_.push_back(e);
    return Value::make_opaque(tag_event, pending_events_.size() - 1);
}

// Parsed once per action name: a trace holds a dozen names and millions of entries, and a
// short scan beats hashing.
TraceAction ModelBuilder::action_of(StringId name, const Document& doc, const Value& text) {
    for (const auto& [id, action] : action_kinds_)
        if (id == name) return action;
    const TraceAction action = parse_action(doc.text(text));
    if (action_kinds_.size() < 64) action_kinds_.emplace_back(name, action);  // hostile: more are parsed each time
    return action;
}

// Hostile files may hold many distinct values: past TraceEvent::max_streams they fold into
// entry 0.
std::uint16_t ModelBuilder::stream_index(std::int64_t stream) {
    if (stream == last_stream_) return last_stream_index_;  // consecutive entries share one
    last_stream_ = stream;
    const auto hash = [](std::int64_t value) {
        return util::mix_hash(util::hash_seed(), static_cast<std::uint64_t>(value));
    };
    for (std::size_t i = stream_index_.size(); i < out_.streams.size(); ++i)  // entry 0, stream 0
        stream_index_.insert(hash(out_.streams[i]), static_cast<std::uint32_t>(i));
    const std::uint64_t h = hash(stream);
    if (const auto found = stream_index_.find(h, [&](std::uint32_t i) { return out_.streams[i] == stream; })) {
        last_stream_index_ = static_cast<std::uint16_t>(*found);
    } else if (out_.streams.size() >= TraceEvent::max_streams) {
        last_stream_index_ = 0;
    } else {
        stream_index_.insert(h, static_cast<std::uint32_t>(out_.streams.size()));
        out_.streams.push_back(stream);
        last_stream_index_ = static_cast<std::uint16_t>(out_.streams.size() - 1);
    }
    return last_stream_index_;
}

void ModelBuilder::finish(const Document& doc, const std::string& name) {
    const Value root = doc.resolve(doc.root);
    if (root.kind == Kind::list) {
        out_.segments_only = true;
        read_segments(doc, root, name);
    } else if (root.kind == Kind::dict) {
        const auto& kv = doc.items(root);
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2)
            if (kv[i].kind == Kind::string) out_.top_level_keys.emplace_back(doc.text(kv[i]));
        std::sort(out_.top_level_keys.begin(), out_.top_level_keys.end());
        out_.top_level_keys.erase(std::unique(out_.top_level_keys.begin(), out_.top_level_keys.end()),
                                  out_.top_level_keys.end());
        const Value* segments = doc.find(root, "segments");
        if (segments == nullptr) {
            std::string keys;
            for (const auto& k : out_.top_level_keys) keys += (keys.empty() ? "" : ", ") + k;
            throw input_error(fmt::format("not a memory snapshot: the top-level dict has no "
                                          "'segments' key (keys: {})",
                                          keys.empty() ? "none" : keys),
                              name);
        }
        if (doc.resolve(*segments).kind != Kind::list)
            throw input_error(fmt::format("not a memory snapshot: 'segments' is {}, not a list",
                                          kind_name(doc.resolve(*segments).kind)),
                              name);
        read_segments(doc, *segments, name);
        if (const Value* traces = doc.find(root, "device_traces")) read_traces(doc, *traces, name);
        if (const Value* notes = doc.find(root, "external_annotations")) read_annotations(doc, *notes);
        if (const Value* settings = doc.find(root, "allocator_settings")) read_settings(doc, *settings);
    } else {
        throw input_error(fmt::format("not a memory snapshot: the pickle holds {}, not a dict "
                                      "with 'segments'",
                                      kind_name(root.kind)),
                          name);
    }
    out_.has_history = seen_block_history_;
    validate(name);
    name_generation();
}

void ModelBuilder::read_segments(const Document& doc, const Value& list, const std::string& name) {
    const auto& items = doc.items(list);
    std::vector<std::uint32_t> listed;
    listed.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        const Value seg = doc.resolve(items[i]);
        auto fail = [&](const std::string& what) {
            throw input_error(fmt::format("not a memory snapshot: segments[{}] {}", i, what), name);
        };
        if (seg.kind == Kind::dict) fail("has no 'blocks' list");
        if (seg.kind != Kind::opaque || seg.tag != tag_segment)
            fail(fmt::format("is {}, not a segment dict", kind_name(seg.kind)));
        if (segment_listed_[seg.u]) fail("is the same object as an earlier segment: a snapshot never shares segments");
        segment_listed_[seg.u] = 1;
        if (const auto it = segment_problems_.find(static_cast<std::uint32_t>(seg.u)); it != segment_problems_.end())
            fail(it->second);
        listed.push_back(static_cast<std::uint32_t>(seg.u));
    }
    order_segments(listed);
}

void ModelBuilder::order_segments(const std::vector<std::uint32_t>& listed) {
    // Usually the list names every sealed segment in order and their blocks fill out_.blocks
    // in that order too: then nothing moves.
    bool in_place = listed.size() == out_.segments.size();
    std::uint64_t next_block = 0;
    for (std::size_t i = 0; in_place && i < listed.size(); ++i) {
        const Segment& seg = out_.segments[listed[i]];
        in_place = listed[i] == i && seg.first_block == next_block;
        next_block += seg.block_count;
    }
    in_place = in_place && next_block == out_.blocks.size();
    if (!in_place) {
        std::vector<Segment> segments;
        std::vector<Block> blocks;
        for (std::uint32_t id : listed) {
            Segment seg = out_.segments[id];
            const auto first = static_cast<std::uint32_t>(blocks.size());
            blocks.insert(blocks.end(), out_.blocks.begin() + seg.first_block,
                          out_.blocks.begin() + seg.first_block + seg.block_count);
            seg.first_block = first;
            segments.push_back(seg);
        }
        out_.segments = std::move(segments);
        out_.blocks = std::move(blocks);
    }
    for (std::uint32_t i = 0; i < out_.segments.size(); ++i)
        for (auto& b : out_.blocks_of(out_.segments[i])) const_cast<Block&>(b).segment = i;
    std::vector<std::uint8_t>().swap(block_claimed_);
    std::vector<std::uint8_t>().swap(segment_listed_);
}

void ModelBuilder::read_traces(const Document& doc, const Value& list, const std::string& name) {
    const auto& devices = doc.items(list);
    if (devices.size() > 0x7FFF)
        throw input_error(fmt::format("not a memory snapshot: device_traces holds {} device lists, more than any "
                                      "machine has devices",
                                      devices.size()),
                          name);
    out_.trace_devices = devices.size();
    // Entries normally appear once each and in order, stored as runs of ids: then the
    // pending vector already is the result and only needs its devices.
    bool in_order = true;
    std::uint64_t expected = 0;
    for (const Value& device : devices)
        for (const Value& item : doc.items(device)) {
            if (item.kind != Kind::run || item.tag != tag_event || item.u != expected) {
                in_order = false;
                break;
            }
            expected += item.length;
        }
    if (in_order && expected == pending_events_.size()) {
        std::size_t k = 0;
        for (std::size_t dev = 0; dev < devices.size(); ++dev)
            for (const Value& item : doc.items(devices[dev])) {
                if (dev != 0)  // events are read as device 0's
                    for (std::uint64_t n = 0; n < item.length; ++n)
                        pending_events_.set_device(k + n, static_cast<std::int16_t>(dev));
                k += item.length;
            }
        out_.events = std::move(pending_events_);
        out_.event_notes = std::move(pending_notes_);
        return;
    }
    // Each entry belongs to one place in one trace: a list shared by several devices or an
    // entry repeated would make a small file describe a huge trace.
    std::vector<std::uint8_t> used(pending_events_.size(), 0);
    for (std::size_t dev = 0; dev < devices.size(); ++dev)
        for (const Value& item : doc.items(devices[dev])) {
            // Anything but trace entries in a device trace is skipped.
            if (item.tag != tag_event || (item.kind != Kind::run && item.kind != Kind::opaque)) continue;
            const std::uint64_t count = item.kind == Kind::run ? item.length : 1;
            for (std::uint64_t n = 0; n < count; ++n) {
                if (used[item.u + n]++)
                    throw input_error(
                        "not a memory snapshot: the same trace entry appears more than once in "
                        "device_traces (a snapshot never shares them)",
                        name);
                TraceEvent e = pending_events_[item.u + n];
                e.device = static_cast<std::int16_t>(dev);
                const auto note = std::ranges::lower_bound(pending_notes_, item.u + n, {}, &EventNote::event);
                if (note != pending_notes_.end() && note->event == item.u + n) {
                    out_.event_notes.push_back(*note);
                    out_.event_notes.back().event = out_.events.size();
                }
                out_.events.push_back(e);
            }
        }
    pending_events_.clear();
    pending_events_.shrink_to_fit();
    pending_notes_.clear();
}

void ModelBuilder::read_annotations(const Document& doc, const Value& list) {
    for (const Value& item : doc.items(list)) {
        if (doc.resolve(item).kind != Kind::dict) continue;
        Annotation a;
        a.name = intern(doc, doc.find(item, "name"));
        a.stage = intern(doc, doc.find(item, "stage"));
        const auto device = as_int(doc.find(item, "device")).value_or(0);
        if (device < 0 || device > 0xFFFF) {
            ++bad_annotations_;
            continue;
        }
        a.device = static_cast<std::int32_t>(device);
        a.time_us = as_int(doc.find(item, "time_us")).value_or(-1);
        out_.annotations.push_back(a);
    }
}

void ModelBuilder::read_settings(const Document& doc, const Value& dict) {
    if (doc.resolve(dict).kind != Kind::dict) return;
    out_.has_allocator_settings = true;
    const auto& kv = doc.items(dict);
    // Shared memo references can make a small pickle describe a huge tree: one budget for
    // the whole dict bounds the work. A key given twice keeps its last value, as in Python.
    RenderBudget budget;
    std::map<std::string, std::size_t> position;
    std::size_t dropped = 0;
    for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
        std::string key = kv[i].kind == Kind::string ? std::string(doc.text(kv[i]).substr(0, 256))
                                                     : value_to_json(doc, kv[i], budget);
        std::string value = value_to_json(doc, kv[i + 1], budget);
        if (const auto at = position.find(key); at != position.end()) {
            out_.allocator_settings[at->second].second = std::move(value);
        } else if (out_.allocator_settings.size() < kMaxSettings) {
            position.emplace(key, out_.allocator_settings.size());
            out_.allocator_settings.emplace_back(std::move(key), std::move(value));
        } else {
            ++dropped;
        }
    }
    if (dropped)
        out_.warnings.push_back(
            fmt::format("allocator_settings holds more than {} keys; {} left out", kMaxSettings, dropped));
    if (budget.values == 0 || budget.bytes == 0)
        out_.warnings.push_back("allocator_settings is larger than memsnap renders; the rest is shown as \"...\"");
}

void ModelBuilder::name_generation() {
    auto& f = out_.source.features;
    const auto has_key = [&](std::string_view k) {
        return std::find(out_.top_level_keys.begin(), out_.top_level_keys.end(), k) != out_.top_level_keys.end();
    };
    if (seen_block_history_) f.emplace_back("block history");
    if (seen_cpp_frames_) f.emplace_back("cpp_frames");
    if (seen_block_frames_) f.emplace_back("block frames");
    if (seen_block_address_) f.emplace_back("block address");
    if (seen_block_requested_) f.emplace_back("requested_size");
    if (seen_expandable_) f.emplace_back("is_expandable");
    if (seen_time_us_) f.emplace_back("time_us");
    if (has_key("allocator_settings")) f.emplace_back("allocator_settings");
    if (has_key("external_annotations")) f.emplace_back("external_annotations");
    if (seen_compile_context_) f.emplace_back("compile_context");
    if (seen_user_metadata_) f.emplace_back("user_metadata");
    if (seen_pool_id_) f.emplace_back("pool_id");
    if (seen_forward_frames_) f.emplace_back("forward_frames");

    std::string& g = out_.source.generation;
    // Key presence decides, newest evidence first (torch-formats.md §3).
    if (seen_block_history_)
        g = seen_block_requested_ ? "torch 2.0 (block history)"
                                  : "torch 1.13 or older (block history, no requested_size)";
    else if (seen_pool_id_ || seen_forward_frames_)
        g = "torch 2.9 or newer (trace pool_id / forward_frames)";
    else if (seen_compile_context_ || seen_user_metadata_)
        g = "torch 2.6 or newer (trace compile_context / user_metadata)";
    else if (has_key("external_annotations"))
        g = "torch 2.5 or newer (external_annotations)";  // PR #130964, after the 2.4 branch cut
    else if (has_key("allocator_settings"))
        g = "torch 2.3 or newer (allocator_settings)";
    else if (seen_time_us_)
        g = "torch 2.2 or newer (trace time_us)";
    else if (seen_block_frames_ || seen_block_address_)
        g = "torch 2.1 or newer (block frames and address)";
    else
        g = "unknown (no generation-specific keys)";
    if (out_.segments_only) g += ", segments-only list";
}

namespace {

std::string json_string(std::string_view text) {
    return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string value_to_json(const Document& doc, const Value& raw, RenderBudget& budget, int depth) {
    const Value v = doc.resolve(raw);
    if (depth > 32 || budget.values == 0 || budget.bytes == 0) return "\"...\"";
    --budget.values;
    const auto spend = [&](std::string text) {
        budget.bytes = text.size() >= budget.bytes ? 0 : budget.bytes - text.size();
        return text;
    };
    switch (v.kind) {
        case Kind::none:
        case Kind::unset:
            return "null";
        case Kind::boolean:
            return v.i ? "true" : "false";
        case Kind::integer:
            return spend(std::to_string(v.i));
        case Kind::big_integer:
            return spend(std::to_string(v.u));
        case Kind::floating:
            return spend(nlohmann::json(v.d).dump());
        case Kind::string:
            return spend(json_string(doc.text(v).substr(0, budget.bytes)));
        case Kind::bytes:
            return fmt::format("\"<{} bytes>\"", v.length);
        case Kind::opaque:
        case Kind::run:
            return "\"<record>\"";
        case Kind::dict: {
            std::string out = "{";
            const auto& kv = doc.items(v);
            for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
                if (i) out += ",";
                out += kv[i].kind == Kind::string ? spend(json_string(doc.text(kv[i]).substr(0, budget.bytes)))
                                                  : json_string(value_to_json(doc, kv[i], budget, depth + 1));
                out += ":" + value_to_json(doc, kv[i + 1], budget, depth + 1);
            }
            return out + "}";
        }
        case Kind::list:
        case Kind::tuple:
        case Kind::set: {
            std::string out = "[";
            bool first = true;
            for (const Value& item : doc.items(v)) {
                if (!first) out += ",";
                first = false;
                out += value_to_json(doc, item, budget, depth + 1);
            }
            return out + "]";
        }
    }
    return "null";
}

}  // namespace memsnap::snapshot::detail
