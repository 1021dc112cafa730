#pragma once
// The pickle memo in 4 bytes an entry. Python memoizes every string and container, so a
// large capture holds tens of millions of entries; almost all are containers or opaque
// records with small ids, which pack into 29 bits. Strings in the input take a second
// 8-byte word; anything else goes to a side table.

#include <memsnap/pickle/document.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace memsnap::pickle {

class Memo {
  public:
    std::size_t size() const { return entries_.size(); }
    void reserve(std::size_t entries) { entries_.reserve(entries); }
    bool defined(std::uint64_t index) const { return index < entries_.size() && entries_[index] != 0; }
    Value get(std::uint64_t index) const { return decode(entries_[index]); }
    // get() for the most frequent reference of a large capture, a string of the input (a
    // trace entry's keys and action): false, with `v` untouched, for anything else.
    bool get_input_string(std::uint64_t index, Value& v) const {
        const std::uint32_t e = entries_[index];
        if ((e & 7) != input_string) return false;
        v = string_of(e >> 3);
        return true;
    }
    // Stores `v` at `index`, growing the memo (holes stay undefined). False when `v` does not
    // pack and the side table is full (hostile PUTs over one index, 2^29 times).
    [[nodiscard]] bool put(std::uint64_t index, const Value& v) {
        // Inline for the most frequent case: a value the hook made from a literal, memoized
        // next (one or two per trace entry).
        if (index == entries_.size() && v.kind == Kind::opaque && packs_opaque(v)) {
            entries_.push_back(packed_opaque(v));
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

    // Counts the replacements of opaque entries (a hostile PUT to a used index; torch never
    // writes one). A cache of decoded memo reads is valid while this stays the same.
    std::uint64_t opaque_overwrites() const { return opaque_overwrites_; }

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

    std::vector<std::uint32_t> entries_;
    std::vector<std::uint64_t> strings_;  // input strings: offset << 21 | length
    // Recent short strings by a hash of their text: their number in strings_ plus one (0: none).
    // Direct-mapped: a collision costs a new number, never a wrong one (the texts are compared).
    static constexpr std::size_t kShortString = 32;
    std::array<std::uint32_t, 1024> recent_strings_{};
    std::string_view input_;
    std::uint64_t released_before_ = 0;
    std::vector<Value> others_;  // values that do not pack
    std::uint64_t opaque_overwrites_ = 0;
};

}  // namespace memsnap::pickle
