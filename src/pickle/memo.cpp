#include "memo.hpp"

#include <memsnap/util/hash.hpp>

#include <algorithm>
#include <array>

namespace memsnap::pickle {

void Memo::reserve(std::size_t entries) {
    raw_.reserve(entries);
    narrow_.reserve(entries);
    blocks_.reserve((entries >> block_bits) + 1);
}

std::size_t Memo::coded_entries() const {
    return static_cast<std::size_t>(
               std::ranges::count_if(blocks_, [](const Block& b) { return b.dict_at != raw_block; }))
           << block_bits;
}

bool Memo::put_any(std::uint64_t index, const Value& v) {
    const auto packed = encode(v);
    if (!packed) return false;
    const std::uint32_t e = *packed;
    while (index > size_) append(0);  // holes stay undefined (the reader bounds the gap)
    if (index == size_) {
        append(e);
        return true;
    }
    ++rewrites_;
    Block& b = blocks_[index >> block_bits];
    if (b.dict_at != raw_block) make_raw(b);
    std::uint32_t& slot = raw_[b.at + (index & block_mask)];
    const auto old_tag = slot & 7;  // an opaque value is packed or in `others_`
    if ((old_tag == opaque || old_tag == other) && slot != e) ++opaque_overwrites_;
    slot = e;
    return true;
}

void Memo::start_block() {
    // What is still open this far behind is a long-lived container, sealed (and PUT) later.
    std::uint32_t chunk = raw_block;
    if (blocks_.size() >= coding_lag) {
        Block& behind = blocks_[blocks_.size() - coding_lag];
        const std::uint32_t at = behind.at;
        if (behind.dict_at == raw_block && code_block(behind)) chunk = at;  // its chunk is free
    }
    if (chunk == raw_block) chunk = new_raw_chunk();
    blocks_.push_back(Block{.at = chunk});
    tail_at_ = chunk;
}

std::uint32_t Memo::new_raw_chunk() {
    const std::size_t at = raw_.size();
    raw_.resize(at + (block_mask + 1));
    return static_cast<std::uint32_t>(at);  // the memo holds at most Limits::memo_cap entries
}

bool Memo::code_block(Block& b) {
    // Blocks in a row are alike: the kinds that ran in the last coded block are tried first.
    if (last_runs_ && code_with(b, *last_runs_)) return true;
    // The three most frequent kinds run; the rest go to the dictionary.
    const std::uint32_t* e = raw_.data() + b.at;
    std::array<std::uint16_t, 128> count{};
    for (std::size_t i = 0; i <= block_mask; ++i) ++count[kind_of(e[i])];
    RunKinds run_of;
    run_of.fill(no_run);
    for (std::uint8_t run = 0; run < no_run; ++run) {
        const auto best = static_cast<std::size_t>(std::ranges::max_element(count) - count.begin());
        if (count[best] < 2) break;
        count[best] = 0;
        run_of[best] = run;
    }
    if (!code_with(b, run_of)) return false;
    last_runs_ = run_of;
    return true;
}

bool Memo::code_with(Block& b, const RunKinds& run_of) {
    constexpr std::size_t entries = block_mask + 1;
    const std::uint32_t* e = raw_.data() + b.at;
    // A run's entries lie up to 8,191 steps either way of its first in the block, which is
    // `middle` steps above its base; what lies farther goes to the dictionary.
    constexpr std::uint32_t middle = 1u << (code_bits - 1);
    Block coded{.at = static_cast<std::uint32_t>(narrow_.size()), .dict_at = static_cast<std::uint32_t>(dict_.size())};
    std::array<bool, 3> seen{};
    narrow_.resize(coded.at + entries);
    std::uint16_t* code = narrow_.data() + coded.at;
    std::array<std::uint16_t, 2 * max_dict> slots{};  // dictionary index + 1 by a hash of the entry
    std::uint32_t dict_size = 0;
    for (std::size_t i = 0; i < entries; ++i) {
        const std::uint32_t value = e[i];
        const std::uint8_t run = run_of[kind_of(value)];
        if (run != no_run) {
            if (!seen[run]) {
                seen[run] = true;
                coded.step_bits[run] = step_bits_of(value);
                coded.base[run] = value - (middle << coded.step_bits[run]);
            }
            // Same kind, so the distance from the base is a whole number of steps (mod 2^32:
            // an entry below the base comes out far above the reach).
            const std::uint32_t offset = (value - coded.base[run]) >> coded.step_bits[run];
            if (offset < 2 * middle) {
                code[i] = static_cast<std::uint16_t>(std::uint32_t{run} << code_bits | offset);
                continue;
            }
        }
        std::size_t h = dict_slot_(value) & (slots.size() - 1);
        while (slots[h] != 0 && dict_[coded.dict_at + slots[h] - 1] != value) h = (h + 1) & (slots.size() - 1);
        if (slots[h] == 0) {
            if (dict_size == max_dict) {
                narrow_.resize(coded.at);
                dict_.resize(coded.dict_at);
                return false;
            }
            dict_.push_back(value);
            slots[h] = static_cast<std::uint16_t>(++dict_size);
        }
        code[i] = static_cast<std::uint16_t>(no_run << code_bits | (slots[h] - 1));
    }
    b = coded;
    return true;
}

void Memo::make_raw(Block& b) {
    const std::uint32_t at = new_raw_chunk();
    const std::uint64_t first = static_cast<std::uint64_t>(&b - blocks_.data()) << block_bits;
    for (std::uint64_t i = 0; i <= block_mask; ++i) raw_[at + i] = entry(first + i);
    b = Block{.at = at};
}

std::optional<std::uint32_t> Memo::encode(const Value& v) {
    constexpr std::uint64_t payload_limit = std::uint64_t{1} << payload_bits;
    const auto pack = [](Tag tag, std::uint64_t payload) { return static_cast<std::uint32_t>((payload << 3) | tag); };
    const auto container_tag = [](Kind kind) {
        return kind == Kind::list ? list : kind == Kind::dict ? dict : kind == Kind::tuple ? tuple : set;
    };
    switch (v.kind) {
        case Kind::list:
        case Kind::dict:
        case Kind::tuple:
        case Kind::set:
            if (v.u < payload_limit) return pack(container_tag(v.kind), v.u);
            break;
        case Kind::opaque:
            if (packs_opaque(v)) return packed_opaque(v);
            break;
        case Kind::string:
            if ((v.flags & 1) == 0 && v.length < (1u << string_length_bits) &&
                v.u < (std::uint64_t{1} << (64 - string_length_bits)) && strings_.size() < payload_limit)
                return pack(input_string, number_input_string(v));
            break;
        default:
            break;
    }
    // PUTs over one index again and again could grow the side table past what 29 bits number.
    if (others_.size() >= payload_limit) return std::nullopt;
    others_.push_back(v);
    return pack(other, others_.size() - 1);
}

std::uint32_t Memo::number_input_string(const Value& v) {
    const auto add = [&] {
        strings_.push_back((v.u << string_length_bits) | v.length);
        return static_cast<std::uint32_t>(strings_.size() - 1);
    };
    // Only text the reader has not given back is read: a string of the input set here, past the
    // offset the reader released up to.
    if (v.length > kShortString || v.u < released_before_ || v.u + v.length > input_.size()) return add();
    const std::string_view text = input_.substr(v.u, v.length);
    std::uint32_t& recent = recent_strings_[util::hash_text(text) & (recent_strings_.size() - 1)];
    if (recent != 0) {
        const std::uint64_t s = strings_[recent - 1];
        const std::uint64_t offset = s >> string_length_bits;
        const auto length = static_cast<std::uint32_t>(s & ((1u << string_length_bits) - 1));
        if (offset >= released_before_ && length == v.length && input_.substr(offset, length) == text)
            return recent - 1;
    }
    const std::uint32_t number = add();
    recent = number + 1;
    return number;
}

}  // namespace memsnap::pickle
