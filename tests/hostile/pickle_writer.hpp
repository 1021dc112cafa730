#pragma once
// A small writer of pickle opcodes, for building hostile inputs byte by byte. It writes
// protocol 4 the way Python's pickler does, but lets a test say exactly which memo
// references, shares and lengths appear.

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace memsnap::hostile {

class PickleWriter {
  public:
    PickleWriter() { out_ += "\x80\x04"; }

    PickleWriter& op(char c) {
        out_ += c;
        return *this;
    }
    PickleWriter& empty_dict() { return op('}'); }
    PickleWriter& empty_list() { return op(']'); }
    PickleWriter& mark() { return op('('); }
    PickleWriter& appends() { return op('e'); }
    PickleWriter& append() { return op('a'); }
    PickleWriter& setitems() { return op('u'); }
    PickleWriter& setitem() { return op('s'); }
    PickleWriter& memoize() { return op('\x94'); }
    PickleWriter& stop() { return op('.'); }
    PickleWriter& none() { return op('N'); }

    PickleWriter& str(std::string_view s) {
        if (s.size() < 256) {
            out_ += '\x8c';
            out_ += static_cast<char>(s.size());
        } else {
            out_ += 'X';
            le(static_cast<std::uint32_t>(s.size()), 4);
        }
        out_ += s;
        return *this;
    }
    PickleWriter& integer(std::int64_t v) {
        if (v >= 0 && v < 256) {
            out_ += 'K';
            out_ += static_cast<char>(v);
        } else if (v >= INT32_MIN && v <= INT32_MAX) {
            out_ += 'J';
            le(static_cast<std::uint32_t>(static_cast<std::int32_t>(v)), 4);
        } else {
            out_ += "\x8a\x08";
            le(static_cast<std::uint64_t>(v), 8);
        }
        return *this;
    }
    // LONG1 with raw little-endian bytes (e.g. 9 bytes for 2^64 - 1).
    PickleWriter& long1(const std::string& bytes) {
        out_ += '\x8a';
        out_ += static_cast<char>(bytes.size());
        out_ += bytes;
        return *this;
    }
    PickleWriter& binput(std::uint32_t index) {
        if (index < 256) {
            out_ += 'q';
            out_ += static_cast<char>(index);
        } else {
            out_ += 'r';
            le(index, 4);
        }
        return *this;
    }
    PickleWriter& binget(std::uint32_t index) {
        if (index < 256) {
            out_ += 'h';
            out_ += static_cast<char>(index);
        } else {
            out_ += 'j';
            le(index, 4);
        }
        return *this;
    }
    // key then value: call between mark() and setitems().
    PickleWriter& key(std::string_view k) { return str(k); }

    const std::string& bytes() const { return out_; }
    std::string& raw() { return out_; }

  private:
    void le(std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) out_ += static_cast<char>((v >> (8 * i)) & 0xFF);
    }
    std::string out_;
};

}  // namespace memsnap::hostile
