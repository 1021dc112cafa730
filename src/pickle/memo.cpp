#include "memo.hpp"

namespace memsnap::pickle {

namespace {
constexpr std::uint64_t payload_bits = 61;
constexpr std::uint64_t payload_limit = std::uint64_t{1} << payload_bits;
}  // namespace

void Memo::put(std::uint64_t index, const Value& v) {
    const std::uint64_t e = encode(v);
    if (index == entries_.size()) {
        entries_.push_back(e);
        return;
    }
    if (index > entries_.size()) entries_.resize(index + 1, 0);
    if ((entries_[index] & 7) == opaque && entries_[index] != e) ++opaque_overwrites_;
    entries_[index] = e;
}

std::uint64_t Memo::encode(const Value& v) {
    auto pack = [](Tag tag, std::uint64_t payload) { return (payload << 3) | tag; };
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
            if (v.u < (std::uint64_t{1} << 45)) return pack(opaque, (v.u << 16) | v.tag);
            break;
        case Kind::string:
            if ((v.flags & 1) == 0 && v.length < (1u << string_length_bits) &&
                v.u < (std::uint64_t{1} << (payload_bits - string_length_bits)))
                return pack(input_string, (v.u << string_length_bits) | v.length);
            break;
        default: break;
    }
    others_.push_back(v);
    return pack(other, others_.size() - 1);
}

}  // namespace memsnap::pickle
