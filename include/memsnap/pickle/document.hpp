#pragma once
// The data a pickle decodes to, kept compact: 16-byte values, strings as views into the
// input, containers in one slot table. Knows nothing about PyTorch.

#include <memsnap/util/text_arena.hpp>

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::pickle {

enum class Kind : std::uint8_t {
    none,
    boolean,
    integer,      // fits int64
    big_integer,  // does not fit int64; `u` holds the low 64 bits, saturated beyond u64
    floating,
    string,  // UTF-8 text
    bytes,   // BINBYTES and friends: kept, never interpreted
    list,
    dict,  // items are key, value, key, value, ...
    tuple,
    set,
    opaque,  // a value a SealHook made out of a container (its meaning is the hook's)
    run,     // in a list only: `length` opaque values of `tag` with ids u, u+1, ... (see
             // SealHook::compress_runs)
    unset,   // a memo hole; never visible outside the reader
};

struct Value {
    Kind kind = Kind::none;
    std::uint8_t flags = 0;    // strings: 1 = owned storage (the document's arena, not the input)
    std::uint16_t tag = 0;     // opaque: the hook's type tag
    std::uint32_t length = 0;  // strings and bytes: byte length
    union {
        std::int64_t i;
        std::uint64_t u;
        double d;
    };
    Value() : u(0) {}

    static Value make_none() { return {}; }
    static Value make_bool(bool b) {
        Value v;
        v.kind = Kind::boolean;
        v.i = b ? 1 : 0;
        return v;
    }
    static Value make_int(std::int64_t x) {
        Value v;
        v.kind = Kind::integer;
        v.i = x;
        return v;
    }
    static Value make_float(double x) {
        Value v;
        v.kind = Kind::floating;
        v.d = x;
        return v;
    }
    static Value make_opaque(std::uint16_t tag, std::uint64_t id) {
        Value v;
        v.kind = Kind::opaque;
        v.tag = tag;
        v.u = id;
        return v;
    }
    bool is_container() const {
        return kind == Kind::list || kind == Kind::dict || kind == Kind::tuple || kind == Kind::set;
    }
};
static_assert(sizeof(Value) == 16);

// One container. A container is *sealed* once it is stored inside another (or returned
// as the root); sealed containers never change, which is what lets a hook replace them.
struct Slot {
    static constexpr std::uint32_t no_memo = 0xFFFFFFFFu;
    Value replacement;                   // kind != unset once a hook replaced the container
    std::uint32_t items = 0;             // index into Document::item_store_
    std::uint32_t memo_index = no_memo;  // where the container was memoized, if once
    std::uint16_t depth = 1;             // nesting depth below and including this container
    Kind kind = Kind::list;
    bool sealed = false;
    // The slot may be reused once its container is replaced, unless copies of the container
    // value can still exist: more than one memo entry, or a memo read before it was sealed.
    bool pinned = false;
};

class Document {
  public:
    explicit Document(std::string_view input = {}) : input_(input) {}

    std::string_view input() const noexcept { return input_; }

    // Text of a string or bytes value.
    std::string_view text(const Value& v) const {
        if (v.kind != Kind::string && v.kind != Kind::bytes) return {};
        if (v.flags & 1) return std::string_view(owned_strings_).substr(v.u, v.length);
        if (v.u < kept_below_) [[unlikely]]
            return kept_text(v);
        return input_.substr(v.u, v.length);
    }

    // Input that arrives in pieces (a decompressed file, read as it is decompressed): the
    // same bytes, longer. Offsets stay valid.
    void extend_input(std::string_view input) { input_ = input; }
    // Strings of the input are views, which the memo may hand out long after the reader has
    // passed them. An input whose read bytes are dropped (anonymous memory does not fault back
    // like a file's pages) has its strings noted as they are made, and copied by
    // keep_strings_before(offset) before the bytes below `offset` go; text() then reads the copy.
    void note_input_strings() { noting_ = true; }
    void keep_strings_before(std::uint64_t offset);
    // Items of a container value (dicts: key, value pairs flattened). Empty for others.
    const std::vector<Value>& items(const Value& v) const {
        const Value r = resolve(v);
        if (!r.is_container()) return no_items_;
        return item_store_[slots_[r.u].items];
    }
    // Dict lookup by string key; nullptr when absent or `dict` is not a dict.
    const Value* find(const Value& dict, std::string_view key) const;
    // A value with replacements applied (what a reader should look at).
    Value resolve(const Value& v) const {
        if (v.is_container()) {
            const Slot& s = slots_[v.u];
            if (s.replacement.kind != Kind::unset) return s.replacement;
        }
        return v;
    }
    std::uint16_t depth(const Value& v) const;

    // Construction API, shared by the pickle machine and the JSON reader.
    Value new_container(Kind kind);
    // A string that is not in the input (JSON unescapes): kept in one arena, repeats once.
    Value new_owned_string(std::string_view text);
    Value new_input_string(std::uint64_t offset, std::uint32_t length, Kind kind = Kind::string);
    Slot& slot(const Value& container) { return slots_[container.u]; }
    const Slot& slot(const Value& container) const { return slots_[container.u]; }
    std::vector<Value>& mutable_items(const Value& container) { return item_store_[slots_[container.u].items]; }
    // Releases the storage of a container that a hook replaced.
    void release_items(const Value& container);
    // A hook that replaced a container has used up `child` (a sealed container held in it,
    // never shared in a real file): its storage goes and any later reference to it reads
    // `tombstone`, so a crafted file that shares it cannot have it read twice.
    void consume(const Value& child, const Value& tombstone);
    // Makes the slot of a replaced container available to new_container(), once, unless it is
    // pinned (a copy of it may still be read).
    void recycle_slot(const Value& container) {
        Slot& s = slots_[container.u];
        if (s.pinned) return;
        s.pinned = true;
        free_slots_.push_back(static_cast<std::uint32_t>(container.u));
    }
    // Items added to a container by a producer (the machine, the JSON reader).
    void count_items(std::uint64_t n) { live_items_ += n; }
    // What the document holds now, estimated at 16 bytes an item and 64 a container: the
    // producers bound it so that no input can make memory grow far past its size.
    std::uint64_t held_bytes() const { return 16 * live_items_ + 64 * live_containers_; }
    // Container slots ever made (reused ones count once).
    std::size_t slot_count() const { return slots_.size(); }

    Value root;

  private:
    std::string_view input_;
    std::vector<Slot> slots_;
    std::vector<std::vector<Value>> item_store_;
    std::vector<std::uint32_t> free_item_lists_;
    std::vector<std::uint32_t> free_slots_;
    std::string owned_strings_;  // the arena
    struct RecentString {
        std::uint64_t offset = 0;
        std::uint32_t length = 0;
    };
    std::vector<RecentString> recent_strings_;  // by hash: repeated strings are stored once
    std::uint64_t live_items_ = 0, live_containers_ = 0;
    static const std::vector<Value> no_items_;

    std::string_view kept_text(const Value& v) const;
    bool noting_ = false;
    struct Span {
        std::uint64_t offset;
        std::uint32_t length;
    };
    std::vector<Span> noted_;                  // strings of the input not copied yet, in input order
    std::size_t noted_kept_ = 0;               // how many of noted_ are copied
    std::uint64_t kept_below_ = 0;             // strings starting below this offset read their copy
    std::vector<std::uint64_t> kept_offsets_;  // input offsets of the copies, ascending
    std::vector<const char*> kept_at_;         // where each copy is
    util::TextArena kept_;
};

// Replaces sealed containers by compact values (bottom-up: children are sealed first).
// Returning nullopt keeps the container as it is.
class SealHook {
  public:
    virtual ~SealHook() = default;
    virtual std::optional<Value> on_seal(const Document& doc, const Value& container) = 0;
    // Called when on_seal replaced `container` by `replacement`, while its items are still
    // there: the hook may Document::consume children it has taken everything from.
    virtual void after_replace(Document& /*doc*/, const Value& /*container*/, const Value& /*replacement*/) {}
    // The opaque tag whose consecutive values lists may store as one Kind::run item, or -1:
    // millions of trace entries then cost nothing in their list. Readers of such lists
    // must expand runs. Asked once per decode.
    virtual int run_tag() const { return -1; }
    // A complete list written in one piece (EMPTY_LIST, MARK, memo references, APPENDS) whose
    // items are all already-replaced values: the hook may replace it without the list ever
    // being built. This is how a large capture's frame lists are read. nullopt: build it.
    // The result must depend only on `items`: the reader reuses it for the same memo run.
    virtual std::optional<Value> on_list_literal(const Document& /*doc*/, std::span<const Value> /*items*/) {
        return std::nullopt;
    }
    // A complete dict written in one piece whose keys are strings and whose values are
    // scalars, strings or replaced values (a trace entry), as alternating keys and values:
    // the hook may replace it without the dict being built. nullopt: build it, and on_seal
    // sees it as usual.
    virtual std::optional<Value> on_dict_literal(const Document& /*doc*/, std::span<const Value> /*keys_and_values*/) {
        return std::nullopt;
    }
};

// Applies a hook to a container that is being stored: marks it sealed, asks the hook, and
// returns what the parent should hold. Used by every producer of Documents.
Value seal(Document& doc, const Value& v, SealHook* hook);

}  // namespace memsnap::pickle
