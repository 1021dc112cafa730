#include "memo.hpp"

#include <memsnap/error.hpp>
#include <memsnap/pickle/reader.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memsnap::pickle {

namespace {

// Opcodes that would import or call code. Named so the error says exactly what was refused.
const char* code_loading_opcode(std::uint8_t op) {
    switch (op) {
        case 'c':
            return "GLOBAL";
        case 0x93:
            return "STACK_GLOBAL";
        case 'R':
            return "REDUCE";
        case 'b':
            return "BUILD";
        case 0x81:
            return "NEWOBJ";
        case 0x92:
            return "NEWOBJ_EX";
        case 'i':
            return "INST";
        case 'o':
            return "OBJ";
        case 'P':
            return "PERSID";
        case 'Q':
            return "BINPERSID";
        case 0x82:
            return "EXT1";
        case 0x83:
            return "EXT2";
        case 0x84:
            return "EXT4";
        default:
            return nullptr;
    }
}

// Text opcodes of protocols 0 and 1 and out-of-band buffers: data, but never written by torch.
const char* unsupported_opcode(std::uint8_t op) {
    switch (op) {
        case 'I':
            return "INT (protocol 0 text)";
        case 'L':
            return "LONG (protocol 0 text)";
        case 'S':
            return "STRING (protocol 0 text)";
        case 'V':
            return "UNICODE (protocol 0 text)";
        case 'F':
            return "FLOAT (protocol 0 text)";
        case 'p':
            return "PUT (protocol 0 text)";
        case 'g':
            return "GET (protocol 0 text)";
        case 0x97:
            return "NEXT_BUFFER (out-of-band buffer)";
        case 0x98:
            return "READONLY_BUFFER (out-of-band buffer)";
        default:
            return nullptr;
    }
}

bool valid_utf8_bytes(const unsigned char* s, std::size_t n) {
    std::size_t i = 0;
    while (i < n) {
        // Fast path over ASCII, eight bytes at a time.
        if (i + 8 <= n) {
            std::uint64_t chunk;
            std::memcpy(&chunk, s + i, 8);
            if ((chunk & 0x8080808080808080ull) == 0) {
                i += 8;
                continue;
            }
        }
        const unsigned char c = s[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        std::size_t len;
        std::uint32_t cp;
        if ((c & 0xE0) == 0xC0) {
            len = 2;
            cp = c & 0x1F;
        } else if ((c & 0xF0) == 0xE0) {
            len = 3;
            cp = c & 0x0F;
        } else if ((c & 0xF8) == 0xF0) {
            len = 4;
            cp = c & 0x07;
        } else {
            return false;
        }
        if (i + len > n) return false;
        for (std::size_t k = 1; k < len; ++k) {
            if ((s[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        // Python's encoder emits surrogates only with surrogatepass; reject overlongs only.
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF)
            return false;
        i += len;
    }
    return true;
}

constexpr std::uint64_t kMaxMemoGap = 1u << 16;

class Machine {
  public:
    Machine(Document& doc, const Limits& limits, SealHook* hook, const std::function<void(std::uint64_t)>& consumed,
            const GrowingInput* growing)
        : doc_(doc),
          in_(doc.input()),
          limits_(limits),
          hook_(hook),
          consumed_(consumed),
          growing_(growing),
          run_tag_(hook != nullptr ? hook->run_tag() : -1),
          held_limit_(limits.held_limit(in_.size())),
          at_end_(growing == nullptr) {
        // Real captures memoize about one value per 100 bytes: room for three times that, so
        // the memo does not grow (and copy) on the hot path. A block this large is mapped
        // fresh, so its untouched pages cost no memory.
        const std::uint64_t size = std::max<std::uint64_t>(in_.size(), growing ? growing->expected_size : 0);
        memo_.reserve(std::min<std::size_t>({size / 32, std::size_t{64} << 20, limits_.max_memo_entries}));
        memo_.set_input(in_);
        next_check_ = next_check();
    }

    StreamInfo run();

  private:
    [[noreturn]] void fail(const std::string& message) const { throw input_error(message, {}, op_start_); }

    void need(std::uint64_t n, const char* what) {
        if (n > in_.size() - pos_) [[unlikely]]
            if (!grow(n > UINT64_MAX - pos_ ? UINT64_MAX : pos_ + n))
                fail(
                    fmt::format("truncated: {} needs {} more bytes but the file ends at byte {}", what, n, in_.size()));
    }
    // Asks a growing input for bytes up to `end`; false when it ends before (always, for an
    // input that came whole).
    [[gnu::noinline]] bool grow(std::uint64_t end) {
        if (at_end_) return false;
        in_ = growing_->more(end);
        doc_.extend_input(in_);
        memo_.set_input(in_);
        at_end_ = in_.size() < end;
        held_limit_ = limits_.held_limit(in_.size());
        next_check_ = next_check();
        return !at_end_;
    }
    // Where the main loop next stops for the slow work: a progress report, or keeping a
    // growing input ahead of the reader.
    std::uint64_t next_check() const {
        if (at_end_) return next_report_;
        const std::uint64_t ahead = growing_->lookahead;
        return std::min(next_report_, in_.size() > ahead ? in_.size() - ahead : 0);
    }
    [[gnu::noinline]] void checkpoint() {
        if (pos_ >= next_report_) {
            if (consumed_) consumed_(pos_);
            memo_.input_released_before(pos_);  // what consumed_ may have given back
            next_report_ += consumed_every;
        }
        if (!at_end_ && pos_ + growing_->lookahead >= in_.size()) grow(pos_ + growing_->lookahead + 1);
        next_check_ = next_check();
    }
    // True when the byte at `p`, past what has arrived, may still come: a one-piece read that
    // needs it falls back to the general path.
    bool may_follow(std::uint64_t p) const { return p >= in_.size() && !at_end_; }
    std::uint64_t read_le(unsigned n, const char* what) {
        need(n, what);
        const std::uint64_t v = read_le_at(pos_, n);
        pos_ += n;
        return v;
    }
    // The caller has checked that `n` bytes follow `at`.
    std::uint64_t read_le_at(std::uint64_t at_offset, unsigned n) const {
        // Fixed-size little-endian loads (x86 and ARM): a variable-length memcpy compiles to
        // byte stores that stall the wide load after them.
        const char* at = in_.data() + at_offset;
        switch (n) {
            case 1:
                return static_cast<unsigned char>(*at);
            case 2: {
                std::uint16_t v;
                std::memcpy(&v, at, 2);
                return v;
            }
            case 4: {
                std::uint32_t v;
                std::memcpy(&v, at, 4);
                return v;
            }
            default: {
                std::uint64_t v;
                std::memcpy(&v, at, 8);
                return v;
            }
        }
    }

    [[gnu::always_inline]] inline void push(const Value& v) {
        if (stack_.size() >= limits_.max_container_length) [[unlikely]]
            fail(
                fmt::format("more than {} values on the pickle stack (--max-container)", limits_.max_container_length));
        if (16 * stack_.size() + doc_.held_bytes() > held_limit_) [[unlikely]]
            fail(
                fmt::format("the file would make memsnap hold more than {} MiB of values at once, for a "
                            "file of {} bytes: snapshots hold far less, so it is damaged or crafted",
                            held_limit_ >> 20, in_.size()));
        stack_.push_back(v);
    }
    Value pop(const char* what) {
        if (stack_.size() <= floor()) fail(fmt::format("stack underflow in {}", what));
        Value v = stack_.back();
        stack_.pop_back();
        return v;
    }
    Value& top(const char* what) {
        if (stack_.size() <= floor()) fail(fmt::format("stack underflow in {}", what));
        return stack_.back();
    }
    std::size_t floor() const { return marks_.empty() ? 0 : marks_.back(); }
    std::size_t pop_mark(const char* what) {
        if (marks_.empty()) fail(fmt::format("{} without a MARK (stack underflow)", what));
        const std::size_t m = marks_.back();
        marks_.pop_back();
        return m;
    }

    // Stores stack_[begin..end) into `container`, sealing containers among them first. One
    // call per APPENDS/SETITEMS batch: this is the hot path of large files.
    void add_items(const Value& container, std::size_t begin, std::size_t end, const char* what) {
        if (doc_.slot(container).sealed)
            fail(
                fmt::format("{} changes a container that is already stored elsewhere "
                            "(recursive or self-modifying data is not a snapshot)",
                            what));
        std::uint32_t child_depth = 0;
        for (std::size_t k = begin; k < end; ++k) {
            Value& v = stack_[k];
            if (!v.is_container()) continue;
            if (v.u == container.u)
                fail(
                    fmt::format("{} puts a container inside itself (recursive data is not a "
                                "snapshot)",
                                what));
            child_depth = std::max<std::uint32_t>(child_depth, doc_.slot(v).depth);
            v = seal_value(v);
        }
        Slot& p = doc_.slot(container);
        if (child_depth + 1 > p.depth) {
            if (child_depth + 1 > limits_.max_depth)
                fail(fmt::format("nesting deeper than {} levels (--max-depth)", limits_.max_depth));
            p.depth = static_cast<std::uint16_t>(child_depth + 1);
        }
        auto& items = doc_.mutable_items(container);
        if (items.size() + (end - begin) > limits_.max_container_length)
            fail(fmt::format("a container holds more than {} items (--max-container)", limits_.max_container_length));
        // Lists of the hook's run tag (trace entries) are stored as runs; others as they are.
        if (container.kind == Kind::list && begin < end && stack_[begin].kind == Kind::opaque &&
            stack_[begin].tag == run_tag_) {
            for (std::size_t k = begin; k < end; ++k) append_compressed(items, stack_[k]);
            return;
        }
        items.insert(items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(begin),
                     stack_.begin() + static_cast<std::ptrdiff_t>(end));
        doc_.count_items(end - begin);
    }

    void append_compressed(std::vector<Value>& items, const Value& v) {
        if (v.kind == Kind::opaque && v.tag == run_tag_) {
            if (!items.empty()) {
                Value& last = items.back();
                if (last.kind == Kind::run && last.tag == v.tag && last.u + last.length == v.u &&
                    last.length < 0xFFFFFFFFu) {
                    ++last.length;
                    return;
                }
            }
            Value run = v;
            run.kind = Kind::run;
            run.length = 1;
            items.push_back(run);
            doc_.count_items(1);
            return;
        }
        items.push_back(v);
        doc_.count_items(1);
    }

    // Seals a container about to be stored. When the hook replaced it, its memo entry now
    // holds the replacement, and its slot is reused unless copies of it may still exist.
    Value seal_value(const Value& v) {
        const Value sealed = seal(doc_, v, hook_);
        if (sealed.kind == v.kind) return sealed;  // kept as a container
        Slot& s = doc_.slot(v);
        if (s.memo_index != Slot::no_memo) {
            const Value entry = memo_.get(s.memo_index);
            if (entry.kind == v.kind && entry.u == v.u) store_memo(s.memo_index, sealed);
        }
        doc_.recycle_slot(v);
        return sealed;
    }

    // Python's pickler fills a list or dict in batches of 1000 items, so a batch of fewer is
    // the last: the container on top of the stack is complete and can be sealed (and
    // replaced by the hook) now rather than when its parent is stored. Without this, a file
    // that stores a parent once at the end (the C++ writer does not batch) would keep every
    // trace entry and segment as a full dict until then.
    void seal_completed(std::size_t batch) {
        if (hook_ == nullptr || batch >= 1000 || stack_.empty() || !stack_.back().is_container()) return;
        stack_.back() = seal_value(stack_.back());
    }

    void add_item(const Value& container, const Value& value, const char* what) {
        push(value);
        add_items(container, stack_.size() - 1, stack_.size(), what);
        stack_.pop_back();
    }

    Value expect_container(const Value& v, Kind kind, const char* what) {
        if (v.kind != kind)
            fail(fmt::format("{} applied to a value that is not a {}", what,
                             kind == Kind::list   ? "list"
                             : kind == Kind::dict ? "dict"
                                                  : "set"));
        return v;
    }

    Value make_from(Kind kind, std::size_t begin, const char* what) {
        const Value c = doc_.new_container(kind);
        add_items(c, begin, stack_.size(), what);
        stack_.resize(begin);
        return c;
    }

    void read_string(std::uint64_t length, Kind kind, const char* what) {
        if (length > limits_.max_string_length || length > 0xFFFFFFFFull)
            fail(fmt::format("{} declares {} bytes, over the limit of {} (--max-string)", what, length,
                             limits_.max_string_length));
        need(length, what);
        if (kind == Kind::string &&
            !valid_utf8_bytes(reinterpret_cast<const unsigned char*>(in_.data() + pos_), length))
            fail(fmt::format("{} is not valid UTF-8", what));
        push(doc_.new_input_string(pos_, static_cast<std::uint32_t>(length), kind));
        pos_ += length;
    }

    void read_long(std::uint64_t n) {
        need(n, "LONG");
        push(long_value(reinterpret_cast<const unsigned char*>(in_.data() + pos_), n));
        pos_ += n;
    }
    // A LONG1/LONG4 payload: little-endian two's complement of `n` bytes.
    static Value long_value(const unsigned char* p, std::uint64_t n) {
        if (n == 0) return Value::make_int(0);
        const bool negative = (p[n - 1] & 0x80) != 0;
        // Strip sign-extension bytes, then see whether the rest fits in 64 bits.
        std::uint64_t used = n;
        const unsigned char ext = negative ? 0xFF : 0x00;
        while (used > 1 && p[used - 1] == ext && ((p[used - 2] & 0x80) != 0) == negative) --used;
        std::uint64_t bits = 0;
        for (std::uint64_t k = 0; k < std::min<std::uint64_t>(used, 8); ++k)
            bits |= static_cast<std::uint64_t>(p[k]) << (8 * k);
        if (used < 8 && negative) bits |= ~0ull << (8 * used);
        if (used <= 8) return Value::make_int(static_cast<std::int64_t>(bits));
        Value v;
        v.kind = Kind::big_integer;
        // Unsigned values up to 2^64-1 keep their bits; larger ones saturate.
        const bool fits_u64 = !negative && used == 9 && p[8] == 0;
        v.u = fits_u64 ? bits : (negative ? 0 : ~0ull);
        return v;
    }

    void store_memo(std::uint64_t index, const Value& v) {
        if (!memo_.put(index, v)) fail("more memo values that do not pack than the memo can number (2^29)");
    }

    void check_memo_limit(std::uint64_t index) const {
        if (index >= limits_.max_memo_entries)
            fail(fmt::format("memo index {} is over the limit of {} entries (--max-memo)", index,
                             limits_.max_memo_entries));
    }

    void memo_put(std::uint64_t index) {
        const Value& v = top("memo PUT");
        check_memo_limit(index);
        // Picklers number memo entries in order; a far jump would make the memo hold empty
        // entries that no input byte paid for.
        if (index > memo_.size() + kMaxMemoGap)
            fail(
                fmt::format("memo index {} jumps past the {} entries stored so far (picklers number "
                            "them in order)",
                            index, memo_.size()));
        if (v.is_container()) {
            Slot& s = doc_.slot(v);
            if (v.kind != Kind::tuple && !s.sealed)
                (doc_.items(v).empty() ? info_.memo_before_fill : info_.memo_after_fill)++;
            if (s.memo_index == Slot::no_memo)
                s.memo_index = static_cast<std::uint32_t>(index);
            else
                s.pinned = true;
        }
        store_memo(index, v);
    }

    void memo_get(std::uint64_t index) {
        if (!memo_.defined(index))
            fail(fmt::format("memo reference {} was never stored ({} entries)", index, memo_.size()));
        const Value v = doc_.resolve(memo_.get(index));
        // A copy of a container that is not stored yet: its slot must outlive the seal.
        if (v.is_container()) doc_.slot(v).pinned = true;
        push(v);
    }

    // A frame list is a MARK, a run of BINGET/LONG_BINGET, then APPENDS: the bulk of a large
    // capture. Reads the whole run here instead of one opcode per trip through the switch.
    void memo_get_run(std::uint8_t op) {
        const char* data = in_.data();
        const std::uint64_t size = in_.size();
        while (true) {
            std::uint64_t index;
            if (op == 'h') {
                need(1, "BINGET");
                index = static_cast<unsigned char>(data[pos_]);
                pos_ += 1;
            } else {
                need(4, "LONG_BINGET");
                std::uint32_t i32;
                std::memcpy(&i32, data + pos_, 4);
                index = i32;
                pos_ += 4;
            }
            memo_get(index);
            if (pos_ >= size) return;
            const auto next = static_cast<std::uint8_t>(data[pos_]);
            if (next != 'h' && next != 'j') return;
            op_start_ = pos_;
            op = next;
            ++pos_;
        }
    }

    // A list or dict read in one piece by a peephole: what the hook made of it, where its
    // bytes end, and whether it was MEMOIZEd right after its opening opcode.
    struct Literal {
        Value value;
        std::uint64_t end = 0;
        bool memoize = false;
    };

    // Commits a literal: its memo entry, its writer statistics, the cursor, the stack.
    void commit_literal(const Literal& literal) {
        if (literal.memoize) {
            memoize_literal(literal.value);
        } else {
            if (may_follow(literal.end)) grow(literal.end + 1);  // what follows has not arrived
            if (literal.end < in_.size() && (in_[literal.end] == 'q' || in_[literal.end] == 'r'))
                ++info_.memo_after_fill;  // the C++ writer memoizes shared containers once complete
        }
        pos_ = literal.end;
        push(literal.value);
    }
    void memoize_literal(const Value& value) {
        ++info_.memo_before_fill;
        memoize_next(value);
    }
    // A MEMOIZE that a peephole read: the value takes the next memo index.
    void memoize_next(const Value& value) {
        ++info_.memoize_ops;
        check_memo_limit(memo_.size());
        store_memo(memo_.size(), value);
    }

    // Peephole for EMPTY_LIST [MEMOIZE] MARK (BINGET|LONG_BINGET)+ APPENDS not followed by
    // another batch: when every reference is to a value the hook already replaced, the hook
    // may replace the whole list at once, so no container is built. Same result as the
    // general path; anything unusual falls back to it with the position unchanged.
    bool list_literal() {
        const auto literal = scan_list_literal(pos_);
        if (!literal) return false;
        commit_literal(*literal);
        return true;
    }

    // Where a peephole's items start: after its EMPTY_LIST or EMPTY_DICT at `p` come an
    // optional MEMOIZE (noted in `memoize`) and a MARK; nullopt when they do not.
    std::optional<std::uint64_t> literal_items(std::uint64_t p, bool& memoize) const {
        memoize = p < in_.size() && static_cast<std::uint8_t>(in_[p]) == 0x94;
        if (memoize) ++p;
        if (p >= in_.size() || in_[p] != '(') return std::nullopt;
        return p + 1;
    }
    // Reads the memo index of the BINGET or LONG_BINGET at `p` of `data` (of `size` bytes)
    // for a peephole and moves `p` past it; false when the input ends first.
    [[gnu::always_inline]] static bool read_memo_ref(const char* data, std::uint64_t size, std::uint64_t& p,
                                                     std::uint32_t& index) {
        if (data[p] == 'h') {
            if (p + 2 > size) return false;
            index = static_cast<unsigned char>(data[p + 1]);
            p += 2;
            return true;
        }
        if (p + 5 > size) return false;
        std::memcpy(&index, data + p + 1, 4);
        p += 5;
        return true;
    }

    // The list literal whose bytes start at `p` (after EMPTY_LIST), without touching the
    // memo, the stack or the cursor.
    std::optional<Literal> scan_list_literal(std::uint64_t p) {
        const char* data = in_.data();
        const std::uint64_t size = in_.size();
        Literal literal;
        const auto items = literal_items(p, literal.memoize);
        if (!items) return std::nullopt;
        p = *items;
        // First the memo indices alone: torch builds its frame lists from shared frame dicts,
        // so a real capture repeats a few hundred index runs thousands of times, and a run seen
        // before needs neither memo reads nor the hook.
        std::size_t count = 0;
        std::uint64_t hash = 0;
        std::uint32_t* const ids_out = literal_ids_.data();
        // An id is read only while 5 bytes are left, so either opcode's read is in bounds. A
        // list whose last reference starts later (only a crafted root list can) takes the
        // general path.
        for (; p + 5 <= size; ++count) {
            std::uint32_t index;
            if (data[p] == 'h') {
                index = static_cast<unsigned char>(data[p + 1]);
                p += 2;
            } else if (data[p] == 'j') {
                std::memcpy(&index, data + p + 1, 4);
                p += 5;
            } else {
                break;
            }
            // Real stacks hold hundreds of frames; a longer list takes the general path, which
            // the held-memory budget bounds.
            if (count == kMaxLiteral) return std::nullopt;
            ids_out[count] = index;
            hash = std::rotl(hash, 7) ^ index;
        }
        if (count == 0 || p >= size || data[p] != 'e') return std::nullopt;
        ++p;
        if (p < size ? data[p] == '(' : may_follow(p)) return std::nullopt;  // a second APPENDS batch may follow
        literal.end = p;
        const std::span<const std::uint32_t> ids(literal_ids_.data(), count);
        // The top bits of the product depend on every bit of the run's hash (its middle bits
        // did not: stacks that differ in one frame met in one entry and evicted each other).
        LiteralRun& cached = literal_runs_[(hash * 0x9E3779B97F4A7C15ull) >> (64 - kLiteralRunBits)];
        if (cached.memo_overwrites == memo_.opaque_overwrites() && std::ranges::equal(cached.ids, ids)) {
            literal.value = cached.replacement;
            return literal;
        }
        if (count > literal_.size()) literal_.resize(count);
        for (std::size_t i = 0; i < count; ++i) {
            if (!memo_.defined(ids[i])) return std::nullopt;
            literal_[i] = memo_.get(ids[i]);
            if (literal_[i].kind != Kind::opaque) return std::nullopt;
        }
        const auto made = hook_->on_list_literal(doc_, std::span<const Value>(literal_.data(), count));
        if (!made) return std::nullopt;
        cached.ids.assign(ids.begin(), ids.end());
        cached.replacement = *made;
        cached.memo_overwrites = memo_.opaque_overwrites();
        literal.value = *made;
        return literal;
    }

    // Peephole for EMPTY_DICT [MEMOIZE] MARK (key value)+ SETITEMS not followed by another
    // batch, where keys are memo references to strings and values are memo references to
    // strings or replaced values, strings written in full ([SHORT_]BINUNICODE, then MEMOIZE or
    // nothing), small integers, None, booleans, or list literals: a trace entry. The hook may replace it
    // whole, so no container is built. Anything else falls back with nothing changed (a list
    // literal's stack interned on the way is interned by the general path too).
    bool dict_literal() {
        const char* data = in_.data();
        const std::uint64_t size = in_.size();
        Literal dict;
        const auto items = literal_items(pos_, dict.memoize);
        if (!items) return false;
        std::uint64_t p = *items;
        std::size_t count = 0;
        std::size_t lists = 0;
        std::size_t memoized = 0;  // values MEMOIZEd after their opcodes, in order
        std::uint64_t long1_ops = 0, long1_not_8_bytes = 0;
        if (memo_.rewrites() != keys_read_at_rewrites_) {
            keys_read_.fill(KeyRead{});
            keys_read_at_rewrites_ = memo_.rewrites();
        }
        while (p < size && data[p] != 'u') {
            // The key: a memo reference to a string (a key seen for the first time is written
            // in full, which the general path reads). Keys and values take separate branches,
            // so the values' switch sees the same order of kinds entry after entry.
            if (count + 2 > dict_kv_.size() || p + 9 > size || (data[p] != 'h' && data[p] != 'j')) return false;
            std::uint32_t key_index;
            KeyRead* const known = count / 2 < keys_read_.size() ? &keys_read_[count / 2] : nullptr;
            Value& key = dict_kv_[count++];
            if (!read_memo_ref(data, size, p, key_index)) return false;
            if (known && known->memo_index == key_index) {
                key = known->key;
            } else {
                if (!memo_.lookup(key_index, key) || key.kind != Kind::string) return false;
                if (known) *known = {key_index, key};
            }
            if (p + 9 > size) return false;
            Value& v = dict_kv_[count++];
            const auto op = static_cast<std::uint8_t>(data[p]);
            switch (op) {
                case 'h':
                case 'j': {
                    std::uint32_t index;
                    if (!read_memo_ref(data, size, p, index) || !memo_.lookup(index, v)) return false;
                    if (v.kind != Kind::string && v.kind != Kind::opaque) return false;
                    break;
                }
                case 'K':
                    v = Value::make_int(static_cast<unsigned char>(data[p + 1]));
                    p += 2;
                    break;
                case 'M':
                    v = Value::make_int(static_cast<std::int64_t>(read_le_at(p + 1, 2)));
                    p += 3;
                    break;
                case 'J':
                    v = Value::make_int(static_cast<std::int32_t>(read_le_at(p + 1, 4)));
                    p += 5;
                    break;
                case 0x8A: {  // LONG1
                    const auto n = static_cast<unsigned char>(data[p + 1]);
                    if (n > 8 || p + 2 + n > size) return false;
                    if (n == 0 || p + 10 > size) {
                        v = long_value(reinterpret_cast<const unsigned char*>(data + p + 2), n);
                    } else {  // n bytes of two's complement, sign-extended: one load, two shifts
                        std::uint64_t raw;
                        std::memcpy(&raw, data + p + 2, 8);
                        const auto unused = static_cast<unsigned>(64 - 8 * n);
                        v = Value::make_int(static_cast<std::int64_t>(raw << unused) >> unused);
                    }
                    ++long1_ops;
                    if (n != 8) ++long1_not_8_bytes;
                    p += 2 + n;
                    break;
                }
                case 'N':
                    v = Value::make_none();
                    p += 1;
                    break;
                case 0x88:
                    v = Value::make_bool(true);
                    p += 1;
                    break;
                case 0x89:
                    v = Value::make_bool(false);
                    p += 1;
                    break;
                case 0x8C:   // SHORT_BINUNICODE
                case 'X': {  // BINUNICODE
                    // A writer that does not share string objects writes an entry's action,
                    // compile context and metadata in full, every time.
                    const std::uint64_t header = op == 0x8C ? 2 : 5;
                    const std::uint64_t n = op == 0x8C ? static_cast<unsigned char>(data[p + 1]) : read_le_at(p + 1, 4);
                    if (n > limits_.max_string_length || n > size - p - header) return false;
                    if (!valid_utf8_bytes(reinterpret_cast<const unsigned char*>(data + p + header), n)) return false;
                    v = doc_.new_input_string(p + header, static_cast<std::uint32_t>(n), Kind::string);
                    p += header + n;
                    if (p < size && static_cast<std::uint8_t>(data[p]) == 0x94) {  // MEMOIZE, stored below
                        if (memoized == dict_memoized_.size()) return false;
                        dict_memoized_[memoized++] = v;
                        ++p;
                    }
                    break;
                }
                case ']': {
                    if (lists == kMaxDictLists || memoized == dict_memoized_.size()) return false;
                    const auto list = scan_list_literal(p + 1);
                    if (!list) return false;
                    ++lists;
                    if (list->memoize) dict_memoized_[memoized++] = list->value;
                    v = list->value;
                    p = list->end;
                    break;
                }
                default:
                    return false;
            }
        }
        if (count == 0 || p >= size) return false;
        ++p;                                                          // SETITEMS
        if (p < size ? data[p] == '(' : may_follow(p)) return false;  // a second batch may follow
        const auto made = hook_->on_dict_literal(doc_, std::span<const Value>(dict_kv_.data(), count));
        if (!made) return false;
        // The memo numbers what it stores in order of appearance: the dict, then its lists and
        // strings.
        if (dict.memoize) memoize_literal(*made);
        for (std::size_t i = 0; i < memoized; ++i) {
            const Value& value = dict_memoized_[i];
            if (value.kind == Kind::string)
                memoize_next(value);
            else
                memoize_literal(value);  // a list, MEMOIZEd before it was filled
        }
        info_.long1_ops += long1_ops;
        info_.long1_not_8_bytes += long1_not_8_bytes;
        dict.value = *made;
        dict.end = p;
        dict.memoize = false;  // done above, before the lists
        commit_literal(dict);
        return true;
    }
    std::array<Value, 32> dict_kv_;  // a trace entry has 12 to 18
    // The key read at each place of the last dict literals, by its memo index: entry after
    // entry the same, so the memo is not asked again. Valid while nothing is PUT over an index.
    struct KeyRead {
        std::uint64_t memo_index = UINT64_MAX;  // no 4-byte index read from the file equals it
        Value key;
    };
    std::array<KeyRead, 16> keys_read_{};
    std::uint64_t keys_read_at_rewrites_ = 0;
    static constexpr std::size_t kMaxDictLists = 4;  // list literals in one dict literal
    std::array<Value, 8> dict_memoized_;             // its strings and lists MEMOIZEd, in order

    // A run of memo indices the hook turned into one value: valid while no opaque memo entry
    // has been replaced since (the hook's result depends only on the values read).
    struct LiteralRun {
        std::vector<std::uint32_t> ids;
        Value replacement;
        std::uint64_t memo_overwrites = 0;
    };
    // Direct-mapped: a collision costs one miss, never a wrong value, and memory stays bounded.
    static constexpr unsigned kLiteralRunBits = 12;
    std::vector<LiteralRun> literal_runs_ = std::vector<LiteralRun>(std::size_t{1} << kLiteralRunBits);
    std::vector<std::uint32_t> literal_ids_ = std::vector<std::uint32_t>(kMaxLiteral);
    static constexpr std::size_t kMaxLiteral = 1 << 16;
    std::vector<Value> literal_;
    Document& doc_;
    std::string_view in_;
    const Limits& limits_;
    SealHook* hook_;
    const std::function<void(std::uint64_t)>& consumed_;
    const GrowingInput* growing_;
    int run_tag_;
    std::uint64_t held_limit_;  // bytes the document and stack may hold (Limits::max_held_bytes)
    bool at_end_;               // in_ is the whole input
    std::uint64_t next_report_ = consumed_every;
    std::uint64_t next_check_ = 0;
    std::uint64_t pos_ = 0;
    std::uint64_t op_start_ = 0;
    std::vector<Value> stack_;
    std::vector<std::size_t> marks_;
    Memo memo_;
    StreamInfo info_;
};

StreamInfo Machine::run() {
    if (in_.size() < 16) grow(16);  // enough to tell what it is
    if (in_.empty()) throw input_error("empty file", {}, 0);
    if (!looks_like_pickle(in_)) {
        op_start_ = 0;
        if (in_.substr(0, 2) == "PK") fail("a zip archive (what torch.save writes), not a memory snapshot pickle");
        if (looks_like_old_pickle(in_))
            fail(
                "a pickle of protocol 0 or 1 (text opcodes), which torch never writes: memsnap reads protocols 2 to 5");
        fail(fmt::format("not a pickle of protocol 2 to 5 (starts with byte 0x{:02x})",
                         static_cast<unsigned char>(in_[0])));
    }
    while (true) {
        op_start_ = pos_;
        if (pos_ >= next_check_) [[unlikely]]
            checkpoint();
        if (pos_ >= in_.size() && !grow(pos_ + 1)) fail("truncated: the file ends before the STOP opcode");
        const auto op = static_cast<std::uint8_t>(in_[pos_++]);
        switch (op) {
            case 0x80: {  // PROTO
                const auto version = read_le(1, "PROTO");
                if (version < 2 || version > 5)
                    fail(fmt::format("pickle protocol {} is not supported (2 to 5 are)", version));
                info_.protocol = static_cast<int>(version);
                break;
            }
            case 0x95:  // FRAME: framing only, carries no value
                read_le(8, "FRAME");
                ++info_.frame_ops;
                break;
            case '.': {  // STOP
                if (stack_.size() <= floor()) fail("STOP with an empty stack");
                doc_.root = seal_value(stack_.back());
                info_.stop_offset = op_start_;
                if (!at_end_) grow(UINT64_MAX);  // what follows STOP, to count it
                info_.trailing_bytes = in_.size() - pos_;
                return info_;
            }
            case '(':  // MARK
                if (marks_.size() >= limits_.max_depth)
                    fail(fmt::format("more than {} open MARKs (--max-depth)", limits_.max_depth));
                marks_.push_back(stack_.size());
                break;
            case '}':
                if (hook_ == nullptr || !dict_literal()) push(doc_.new_container(Kind::dict));
                break;
            case ']':
                if (hook_ == nullptr || !list_literal()) push(doc_.new_container(Kind::list));
                break;
            case ')':
                push(doc_.new_container(Kind::tuple));
                break;
            case 0x8F:
                push(doc_.new_container(Kind::set));
                break;   // EMPTY_SET
            case 'a': {  // APPEND
                const Value v = pop("APPEND");
                add_item(expect_container(top("APPEND"), Kind::list, "APPEND"), v, "APPEND");
                seal_completed(1);
                break;
            }
            case 'e': {  // APPENDS
                const std::size_t m = pop_mark("APPENDS");
                if (m == 0 || m <= floor()) fail("stack underflow in APPENDS: no list below MARK");
                const Value list = expect_container(stack_[m - 1], Kind::list, "APPENDS");
                const std::size_t batch = stack_.size() - m;
                add_items(list, m, stack_.size(), "APPENDS");
                stack_.resize(m);
                seal_completed(batch);
                break;
            }
            case 's': {  // SETITEM
                const Value v = pop("SETITEM");
                const Value k = pop("SETITEM");
                const Value dict = expect_container(top("SETITEM"), Kind::dict, "SETITEM");
                push(k);
                push(v);
                add_items(dict, stack_.size() - 2, stack_.size(), "SETITEM");
                stack_.resize(stack_.size() - 2);
                seal_completed(1);
                break;
            }
            case 'u': {  // SETITEMS
                const std::size_t m = pop_mark("SETITEMS");
                if (m == 0 || m <= floor()) fail("stack underflow in SETITEMS: no dict below MARK");
                if ((stack_.size() - m) % 2 != 0) fail("SETITEMS with an odd number of values");
                const Value dict = expect_container(stack_[m - 1], Kind::dict, "SETITEMS");
                const std::size_t batch = (stack_.size() - m) / 2;
                add_items(dict, m, stack_.size(), "SETITEMS");
                stack_.resize(m);
                seal_completed(batch);
                break;
            }
            case 0x90: {  // ADDITEMS
                const std::size_t m = pop_mark("ADDITEMS");
                if (m == 0 || m <= floor()) fail("stack underflow in ADDITEMS: no set below MARK");
                const Value set = expect_container(stack_[m - 1], Kind::set, "ADDITEMS");
                add_items(set, m, stack_.size(), "ADDITEMS");
                stack_.resize(m);
                break;
            }
            case 0x91:
                push(make_from(Kind::set, pop_mark("FROZENSET"), "FROZENSET"));
                break;
            case 't':
                push(make_from(Kind::tuple, pop_mark("TUPLE"), "TUPLE"));
                break;
            case 'l':
                push(make_from(Kind::list, pop_mark("LIST"), "LIST"));
                break;
            case 'd': {  // DICT
                const std::size_t m = pop_mark("DICT");
                if ((stack_.size() - m) % 2 != 0) fail("DICT with an odd number of values");
                push(make_from(Kind::dict, m, "DICT"));
                break;
            }
            case 0x85:
            case 0x86:
            case 0x87: {  // TUPLE1..3
                const std::size_t n = op - 0x84u;
                if (stack_.size() < floor() + n) fail("stack underflow in TUPLE");
                push(make_from(Kind::tuple, stack_.size() - n, "TUPLE"));
                break;
            }
            case '0':  // POP: like Python, pops a MARK when the stack above it is empty
                if (stack_.size() > floor())
                    stack_.pop_back();
                else
                    pop_mark("POP");
                break;
            case '1': {  // POP_MARK
                const std::size_t m = pop_mark("POP_MARK");
                stack_.resize(m);
                break;
            }
            case '2': {  // DUP
                const Value v = top("DUP");
                if (v.is_container()) doc_.slot(v).pinned = true;
                push(v);
                break;
            }
            case 'K':
                push(Value::make_int(static_cast<std::int64_t>(read_le(1, "BININT1"))));
                break;
            case 'M':
                push(Value::make_int(static_cast<std::int64_t>(read_le(2, "BININT2"))));
                break;
            case 'J':
                push(Value::make_int(static_cast<std::int32_t>(read_le(4, "BININT"))));
                break;
            case 0x8A:
                read_long(read_le(1, "LONG1"));
                ++info_.long1_ops;
                if (in_[op_start_ + 1] != 8) ++info_.long1_not_8_bytes;
                break;
            case 0x8B: {  // LONG4
                const auto n = static_cast<std::int32_t>(read_le(4, "LONG4"));
                if (n < 0) fail("LONG4 with a negative length");
                if (static_cast<std::uint64_t>(n) > limits_.max_string_length)
                    fail(fmt::format("LONG4 declares {} bytes (--max-string)", n));
                read_long(static_cast<std::uint64_t>(n));
                break;
            }
            case 'G': {  // BINFLOAT, big-endian
                const std::uint64_t raw = __builtin_bswap64(read_le(8, "BINFLOAT"));
                push(Value::make_float(std::bit_cast<double>(raw)));
                break;
            }
            case 0x88:
                push(Value::make_bool(true));
                break;
            case 0x89:
                push(Value::make_bool(false));
                break;
            case 'N':
                push(Value::make_none());
                break;
            case 0x8C:
                read_string(read_le(1, "SHORT_BINUNICODE"), Kind::string, "SHORT_BINUNICODE");
                break;
            case 'X':
                read_string(read_le(4, "BINUNICODE"), Kind::string, "BINUNICODE");
                break;
            case 0x8D:
                read_string(read_le(8, "BINUNICODE8"), Kind::string, "BINUNICODE8");
                break;
            case 'U':
                read_string(read_le(1, "SHORT_BINSTRING"), Kind::bytes, "SHORT_BINSTRING");
                break;
            case 'T':
                read_string(read_le(4, "BINSTRING"), Kind::bytes, "BINSTRING");
                break;
            case 'C':
                read_string(read_le(1, "SHORT_BINBYTES"), Kind::bytes, "SHORT_BINBYTES");
                break;
            case 'B':
                read_string(read_le(4, "BINBYTES"), Kind::bytes, "BINBYTES");
                break;
            case 0x8E:
                read_string(read_le(8, "BINBYTES8"), Kind::bytes, "BINBYTES8");
                break;
            case 0x96:
                read_string(read_le(8, "BYTEARRAY8"), Kind::bytes, "BYTEARRAY8");
                break;
            case 0x94:  // MEMOIZE
                ++info_.memoize_ops;
                memo_put(memo_.size());
                break;
            case 'q':
                ++info_.put_ops;
                memo_put(read_le(1, "BINPUT"));
                break;
            case 'r':
                ++info_.put_ops;
                memo_put(read_le(4, "LONG_BINPUT"));
                break;
            case 'h':
            case 'j':
                memo_get_run(op);
                break;
            default:
                if (const char* name = code_loading_opcode(op))
                    fail(fmt::format("{} would load code; memsnap reads data only", name));
                if (const char* name = unsupported_opcode(op))
                    fail(fmt::format("opcode {} is not used by any snapshot writer", name));
                fail(fmt::format("unknown opcode 0x{:02x}", op));
        }
    }
}

}  // namespace

std::string_view StreamInfo::writer() const {
    // The C++ pickler: protocol 2, no MEMOIZE, containers memoized only when complete,
    // 8-byte LONG1 throughout. Python memoizes containers before filling them.
    // (The C++ writer memoizes a shared empty list too, so "before fill" is not zero there.)
    if (protocol == 2 && memoize_ops == 0 && long1_not_8_bytes == 0 && memo_before_fill <= memo_after_fill)
        return "torch C++ pickler";
    return "Python pickle";
}

bool valid_utf8(std::string_view text) noexcept {
    return valid_utf8_bytes(reinterpret_cast<const unsigned char*>(text.data()), text.size());
}

bool looks_like_pickle(std::string_view bytes) noexcept {
    return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80;
}

bool looks_like_old_pickle(std::string_view bytes) noexcept {
    if (bytes.size() < 3) return false;
    const std::string_view text_openers = "dltSVIFLN";  // MARK then DICT, LIST, TUPLE, a scalar
    const std::string_view binary_openers = "qr(";      // EMPTY_DICT/LIST then BINPUT or MARK
    if (bytes[0] == '(' && text_openers.find(bytes[1]) != std::string_view::npos) return true;
    if ((bytes[0] == '}' || bytes[0] == ']') && binary_openers.find(bytes[1]) != std::string_view::npos) return true;
    return bytes.starts_with("ccopy_reg\n") || bytes.starts_with("c__builtin__\n");
}

StreamInfo decode(Document& doc, const Limits& limits, SealHook* hook,
                  const std::function<void(std::uint64_t)>& consumed, const GrowingInput* growing) {
    Machine machine(doc, limits, hook, consumed, growing);
    return machine.run();
}

}  // namespace memsnap::pickle
