// pprof's profile.proto, gzipped: `pprof -top`, `-http` and `-diff_base` read memsnap's
// stacks. Sample types inuse_space/bytes and inuse_objects/count; a diff's before side goes
// in as negative samples, so the profile is the change.
#include "pictures.hpp"
#include "profile_support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>

#include <zlib.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace memsnap::report::detail {

namespace {

// The protobuf wire format, as much of it as profile.proto needs.
class Proto {
  public:
    void varint(std::uint64_t v) {
        while (v >= 0x80) {
            out_ += static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        out_ += static_cast<char>(v);
    }
    void key(int field, int wire) { varint(static_cast<std::uint64_t>(field) << 3 | static_cast<std::uint64_t>(wire)); }
    void integer(int field, std::int64_t v) {  // int64 and uint64 fields: two's complement
        if (v == 0) return;
        key(field, 0);
        varint(static_cast<std::uint64_t>(v));
    }
    void bytes(int field, std::string_view b) {
        key(field, 2);
        varint(b.size());
        out_ += b;
    }
    void packed(int field, const std::vector<std::int64_t>& values) {
        Proto inner;
        for (const auto v : values) inner.varint(static_cast<std::uint64_t>(v));
        bytes(field, inner.out_);
    }
    void message(int field, const Proto& m) { bytes(field, m.out_); }
    const std::string& data() const { return out_; }

  private:
    std::string out_;
};

std::string gzip(const std::string& raw) {
    z_stream z{};
    if (deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw input_error("cannot start gzip compression", "pprof");
    std::string out(deflateBound(&z, raw.size()) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
    z.avail_in = static_cast<uInt>(raw.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw input_error("gzip compression failed", "pprof");
    return out;
}

// A name as pprof shows it: util::printable's policy (pprof prints names raw, so an ESC in a
// name would reach the terminal), with angle brackets as square ones, since pprof drops
// "<...>" as C++ template arguments and would turn "<module>" and "<no stack>" into nothing.
std::string pprof_name(std::string_view raw) {
    std::string text = util::printable(raw);
    std::replace(text.begin(), text.end(), '<', '[');
    std::replace(text.begin(), text.end(), '>', ']');
    return text;
}

}  // namespace

std::string profile_pprof(const analysis::StackProfile& p, analysis::Side side) {
    std::vector<std::string> strings{""};
    std::map<std::string, std::int64_t> string_id{{"", 0}};
    const auto intern = [&](const std::string& s) {
        const auto [at, added] = string_id.try_emplace(s, static_cast<std::int64_t>(strings.size()));
        if (added) strings.push_back(s);
        return at->second;
    };
    Proto profile;
    for (const auto& [type, unit] : {std::pair{"inuse_space", "bytes"}, std::pair{"inuse_objects", "count"}}) {
        Proto vt;
        vt.integer(1, intern(type));
        vt.integer(2, intern(unit));
        profile.message(1, vt);
    }
    // One function and one location per frame of the table (ids from 1); a stack cut short
    // gets one more location that says so.
    const auto omitted_id = static_cast<std::int64_t>(p.frame_table.size()) + 1;
    const auto add_sample = [&](const analysis::ProfileSample& s, std::int64_t bytes, std::int64_t count) {
        if (bytes == 0 && count == 0) return;
        std::vector<std::int64_t> locations;
        for (const auto f : s.frames) locations.push_back(static_cast<std::int64_t>(f) + 1);
        if (s.frames_omitted) locations.push_back(omitted_id);
        Proto sample;
        sample.packed(1, locations);
        sample.packed(2, {bytes, count});
        Proto label;
        label.integer(1, intern("category"));
        label.integer(2, intern(std::string(analysis::to_string(s.category))));
        sample.message(3, label);
        profile.message(2, sample);
    };
    for (const auto& s : p.samples) {
        if (!p.differential) {
            add_sample(s, s.bytes, s.count);
        } else if (side == analysis::Side::before) {
            add_sample(s, s.base_bytes, s.base_count);
        } else {
            add_sample(s, s.bytes, s.count);
            if (side == analysis::Side::delta) add_sample(s, -s.base_bytes, -s.base_count);
        }
    }
    for (std::size_t f = 0; f <= p.frame_table.size(); ++f) {
        const bool omitted = f == p.frame_table.size();
        const auto id = static_cast<std::int64_t>(f) + 1;
        Proto function;
        function.integer(1, id);
        const std::string name = omitted ? "[outer frames omitted]" : pprof_name(p.frame_table[f].name);
        function.integer(2, intern(name));
        function.integer(3, intern(name));
        if (!omitted) function.integer(4, intern(pprof_name(p.frame_table[f].filename)));
        profile.message(5, function);
        Proto line;
        line.integer(1, id);
        if (!omitted) line.integer(2, p.frame_table[f].line);
        Proto location;
        location.integer(1, id);
        location.message(4, line);
        profile.message(4, location);
    }
    Proto period;
    period.integer(1, intern("space"));
    period.integer(2, intern("bytes"));
    profile.message(11, period);
    profile.integer(13, intern(pprof_name(profile_title(p))));  // a comment
    // pprof, its web UI and speedscope open on the last sample type unless told: bytes, not counts.
    profile.integer(14, intern("inuse_space"));
    for (const auto& s : strings) profile.bytes(6, s);  // last: every string is interned by now
    return gzip(profile.data());
}

}  // namespace memsnap::report::detail
