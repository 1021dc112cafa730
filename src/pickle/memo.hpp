#pragma once
// The pickle memo in 4 bytes an entry, or about 2 once a block of entries lies behind the
// reader. Python memoizes every string and container, so a large capture holds tens of
// millions of entries; almost all are containers or opaque records with small ids, which pack
// into 29 bits. Strings in the input take a second 8-byte word; anything else goes to a side
// table.

#include <memsnap/pickle/document.hpp>
#include <memsnap/util/hash.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace memsnap::pickle {

class Memo {
  public:
    std::size_t size() const { return size_; }
    void reserve(std::size_t entries);
    bool defined(std::uint64_t index) const { return index < size_ && entry(index) != 0; }
    Value get(std::uint64_t index) { return decode(read(index)); }
    // defined() and get() in one, for the most frequent reference of a large capture (a
    // trace entry's keys and action, strings of the input): false for an entry never stored.
    bool lookup(std::uint64_t index, Value& v) {
        if (index >= size_) return false;
        const std::uint32_t e = read(index);
        if ((e & 7) == input_string) [[likely]] {
            v = string_of(e >> 3);
            return true;
        }
        if (e == unset) return false;
        v = decode(e);
        return true;
    }
    // Stores `v` at `index`, growing the memo (holes stay undefined). False when `v` does not
    // pack and the side table is full (hostile PUTs over one index, 2^29 times).
    [[nodiscard]] bool put(std::uint64_t index, const Value& v) {
        // Inline for the most frequent case: a value the hook made from a literal, memoized
        // next (one or two per trace entry).
        if (index == size_ && v.kind == Kind::opaque && packs_opaque(v)) {
            append(packed_opaque(v));
            return true;
        }
        return put_any(index, v);
    }
    // The input the strings put here lie in (it grows as a decompressed file arrives), and the
    // offset below which the reader may have given its bytes back: an input string equal to one
    // numbered at or past that offset takes that one's number instead of a new one. torch 2.5 on
    // writes a new "N/A" compile context in every trace entry, and each took 8 bytes here.
    void set_input(std::string_view input) { input_ = input; }
    void input_released_before(std::uint64_t offset) { released_before_ = offset; }

    // Entries kept in 2-byte codes, of size() (for tests), in blocks of 1,024 coded once this
    // many blocks follow them (256 KiB kept raw behind the reader).
    std::size_t coded_entries() const;
    static constexpr std::size_t coding_lag = 64;

    // Counts the replacements of opaque entries (a hostile PUT to a used index; torch never
    // writes one). A cache of decoded memo reads is valid while this stays the same.
    std::uint64_t opaque_overwrites() const { return opaque_overwrites_; }
    // Counts PUTs to an index already stored: a value read before stays valid while this does.
    std::uint64_t rewrites() const { return rewrites_; }

  private:
    enum Tag : std::uint32_t {
        unset = 0,
        list = 1,
        dict = 2,
        tuple = 3,
        set = 4,
        opaque = 5,
        input_string = 6,
        other = 7
    };
    static constexpr std::uint32_t payload_bits = 29;
    static constexpr std::uint32_t opaque_tag_bits = 4;      // the hooks' tags are small
    static constexpr std::uint32_t string_length_bits = 21;  // strings up to 2 MiB pack
    static bool packs_opaque(const Value& v) {
        return v.tag < (1u << opaque_tag_bits) && v.u < (std::uint64_t{1} << (payload_bits - opaque_tag_bits));
    }
    static std::uint32_t packed_opaque(const Value& v) {
        return static_cast<std::uint32_t>(((v.u << opaque_tag_bits | v.tag) << 3) | opaque);
    }
    bool put_any(std::uint64_t index, const Value& v);
    std::optional<std::uint32_t> encode(const Value& v);
    std::uint32_t number_input_string(const Value& v);
    Value string_of(std::uint32_t payload) const {
        const std::uint64_t s = strings_[payload];
        Value v;
        v.kind = Kind::string;
        v.length = static_cast<std::uint32_t>(s & ((1u << string_length_bits) - 1));
        v.u = s >> string_length_bits;
        return v;
    }
    // Inline: one decode per BINGET, the most frequent opcode of a large capture.
    Value decode(std::uint32_t e) const {
        const std::uint32_t payload = e >> 3;
        Value v;
        switch (static_cast<Tag>(e & 7)) {
            case unset:
                v.kind = Kind::unset;
                return v;
            case list:
                v.kind = Kind::list;
                v.u = payload;
                return v;
            case dict:
                v.kind = Kind::dict;
                v.u = payload;
                return v;
            case tuple:
                v.kind = Kind::tuple;
                v.u = payload;
                return v;
            case set:
                v.kind = Kind::set;
                v.u = payload;
                return v;
            case opaque:
                v.kind = Kind::opaque;
                v.tag = static_cast<std::uint16_t>(payload & ((1u << opaque_tag_bits) - 1));
                v.u = payload >> opaque_tag_bits;
                return v;
            case input_string:
                return string_of(payload);
            case other:
                return others_[payload];
        }
        return v;
    }

    // The entries by blocks of 1,024. A block the reader has moved 64 blocks past is final but
    // for the containers still open in it, and is read rarely: torch's pickles refer back to
    // recent entries (a frame list used again a few entries on, within 8 blocks in the real
    // captures' shapes) and to frame dicts and keys, far back but few. Most of a large
    // capture's such blocks hold runs of a few kinds of entry numbered in order (a trace's
    // events, its stacks and one shared "N/A"; a segment's blocks, their frames and stacks),
    // so a block is coded in 2 bytes an entry where it can be: the code's top 2 bits pick one
    // of three runs, each the entries of one kind (kind_of) within 8,191 steps of that kind's
    // first entry in the block, as `base` plus steps; or 3, for an index into the block's
    // dictionary of the other entries (256 at most). A block that does not code so stays raw,
    // and a PUT into a coded block (a container sealed late, or a hostile PUT) makes it raw
    // again for good: its codes and dictionary are not reused, so a hostile pickle can make an
    // entry take up to 7 bytes (4 raw, 2 coded, 1 of a full dictionary), never more, as each
    // block is coded once at most.
    static constexpr unsigned block_bits = 10;
    static constexpr std::uint64_t block_mask = (std::uint64_t{1} << block_bits) - 1;
    static constexpr unsigned code_bits = 14;                // below the run's 2 bits
    static constexpr std::uint32_t raw_block = 0xFFFF'FFFF;  // Block::dict_at of a raw block
    static constexpr std::size_t max_dict = 256;             // codes and dictionary in at most 3/4 of a raw block
    struct Block {
        std::uint32_t at = 0;               // raw: offset in raw_; coded: offset in narrow_
        std::uint32_t dict_at = raw_block;  // offset in dict_
        std::array<std::uint32_t, 3> base{};
        std::array<std::uint8_t, 3> step_bits{};
        std::uint8_t reads = 0;  // coded: reads so far, up to hot_block
    };
    // A coded block read this often is made raw: frame dicts and the keys of every trace
    // entry are read from a few blocks millions of times, and a raw read is cheaper.
    static constexpr std::uint8_t hot_block = 64;
    std::uint32_t entry(std::uint64_t index) const {
        const Block& b = blocks_[index >> block_bits];
        if (b.dict_at == raw_block) [[likely]]
            return raw_[b.at + (index & block_mask)];
        const std::uint32_t code = narrow_[b.at + (index & block_mask)];
        const std::uint32_t run = code >> code_bits, offset = code & ((1u << code_bits) - 1);
        return run == 3 ? dict_[b.dict_at + offset] : b.base[run] + (offset << b.step_bits[run]);
    }
    std::uint32_t read(std::uint64_t index) {
        Block& b = blocks_[index >> block_bits];
        if (b.dict_at == raw_block) [[likely]]
            return raw_[b.at + (index & block_mask)];
        if (++b.reads == hot_block) make_raw(b);
        return entry(index);
    }
    void append(std::uint32_t e) {
        if ((size_ & block_mask) == 0) [[unlikely]]
            start_block();
        raw_[tail_at_ + (size_ & block_mask)] = e;
        ++size_;
    }
    void start_block();
    // An entry's kind: its low 7 bits for an opaque record (the hook's tag above the memo's),
    // its low 3 bits (the memo's tag) for anything else; entries of one kind differ by whole
    // steps of 2^step_bits_of.
    static std::uint32_t kind_of(std::uint32_t entry) { return (entry & 7) == opaque ? entry & 127 : entry & 7; }
    static std::uint8_t step_bits_of(std::uint32_t entry) { return (entry & 7) == opaque ? 7 : 3; }
    // Per kind of entry, the run it is coded in, or no_run.
    using RunKinds = std::array<std::uint8_t, 128>;
    static constexpr std::uint8_t no_run = 3;
    bool code_block(Block& b);
    bool code_with(Block& b, const RunKinds& run_of);
    void make_raw(Block& b);
    std::uint32_t new_raw_chunk();

    std::uint64_t size_ = 0;
    std::vector<Block> blocks_;
    std::vector<std::uint32_t> raw_;     // raw blocks, 1,024 entries each
    std::uint32_t tail_at_ = 0;          // the last block's offset in raw_
    std::vector<std::uint16_t> narrow_;  // coded blocks, 1,024 codes each
    std::vector<std::uint32_t> dict_;    // the coded blocks' dictionaries
    // Seeded, so that a crafted file cannot choose entries that all meet in one slot.
    util::MultiplyShift dict_slot_{2 * max_dict};
    std::optional<RunKinds> last_runs_;   // of the last block coded
    std::vector<std::uint64_t> strings_;  // input strings: offset << 21 | length
    // Recent short strings by a hash of their text: their number in strings_ plus one (0: none).
    // Direct-mapped: a collision costs a new number, never a wrong one (the texts are compared).
    static constexpr std::size_t kShortString = 32;
    std::array<std::uint32_t, 1024> recent_strings_{};
    std::string_view input_;
    std::uint64_t released_before_ = 0;
    std::vector<Value> others_;  // values that do not pack
    std::uint64_t opaque_overwrites_ = 0;
    std::uint64_t rewrites_ = 0;
};

}  // namespace memsnap::pickle
