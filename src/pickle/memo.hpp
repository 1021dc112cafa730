#pragma once
// The pickle memo in 8 bytes an entry. Python memoizes every string and container, so a
// large capture holds tens of millions of entries; almost all are containers, opaque
// records or strings in the input, which pack into 61 bits. The rest go to a side table.

#include <memsnap/pickle/document.hpp>

#include <cstdint>
#include <vector>

namespace memsnap::pickle {

class Memo {
public:
    std::size_t size() const { return entries_.size(); }
    bool defined(std::uint64_t index) const { return index < entries_.size() && entries_[index] != 0; }
    Value get(std::uint64_t index) const { return decode(entries_[index]); }
    // Stores `v` at `index`, growing the memo (holes stay undefined).
    void put(std::uint64_t index, const Value& v);
    // Counts the replacements of opaque entries (a hostile PUT to a used index; torch never
    // writes one). A cache of decoded memo reads is valid while this stays the same.
    std::uint64_t opaque_overwrites() const { return opaque_overwrites_; }

private:
    enum Tag : std::uint64_t {
        unset = 0, list = 1, dict = 2, tuple = 3, set = 4, opaque = 5, input_string = 6, other = 7
    };
    std::uint64_t encode(const Value& v);
    // Inline: one decode per BINGET, the most frequent opcode of a large capture.
    Value decode(std::uint64_t e) const {
        const std::uint64_t payload = e >> 3;
        Value v;
        switch (static_cast<Tag>(e & 7)) {
            case unset: v.kind = Kind::unset; return v;
            case list: v.kind = Kind::list; v.u = payload; return v;
            case dict: v.kind = Kind::dict; v.u = payload; return v;
            case tuple: v.kind = Kind::tuple; v.u = payload; return v;
            case set: v.kind = Kind::set; v.u = payload; return v;
            case opaque:
                v.kind = Kind::opaque;
                v.tag = static_cast<std::uint16_t>(payload & 0xFFFF);
                v.u = payload >> 16;
                return v;
            case input_string:
                v.kind = Kind::string;
                v.length = static_cast<std::uint32_t>(payload & ((1u << string_length_bits) - 1));
                v.u = payload >> string_length_bits;
                return v;
            case other: return others_[payload];
        }
        return v;
    }
    static constexpr std::uint64_t string_length_bits = 21;  // strings up to 2 MiB pack

    std::vector<std::uint64_t> entries_;
    std::vector<Value> others_;  // values that do not pack
    std::uint64_t opaque_overwrites_ = 0;
};

}  // namespace memsnap::pickle
