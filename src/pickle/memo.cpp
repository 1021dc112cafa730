#include "memo.hpp"

#include <memsnap/util/hash.hpp>

namespace memsnap::pickle {

bool Memo::put_any(std::uint64_t index, const Value& v) {
    const auto packed = encode(v);
    if (!packed) return false;
    const std::uint32_t e = *packed;
    if (index == entries_.size()) {
        entries_.push_back(e);
        return true;
    }
    if (index > entries_.size()) entries_.resize(index + 1, 0);
    const auto old_tag = entries_[index] & 7;  // an opaque value is packed or in `others_`
    if ((old_tag == opaque || old_tag == other) && entries_[index] != e) ++opaque_overwrites_;
    entries_[index] = e;
    return true;
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
