#include "json_reader.hpp"

#include <memsnap/error.hpp>
#include <memsnap/pickle/reader.hpp>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace memsnap::snapshot::detail {

// The memory of RapidJSON's stack: the string being read (copied there whole before the
// handler sees it) and the iterative parser's state. Capped, so that a string past --max-string
// is refused before it is held in full; growth overshoots by half, hence the cap's margin.
class CappedAllocator {
  public:
    static const bool kNeedFree = true;
    CappedAllocator() = default;  // RapidJSON's own default; never used (read_json passes one)
    CappedAllocator(const pickle::Limits& limits, const rapidjson::MemoryStream& in, const std::string& name)
        : cap_(limits.max_string_length + limits.max_string_length / 2 + (std::size_t{1} << 20)),
          max_string_(limits.max_string_length),
          in_(&in),
          name_(&name) {}
    void* Malloc(std::size_t size) {
        check(size);
        return size != 0 ? std::malloc(size) : nullptr;
    }
    void* Realloc(void* p, std::size_t, std::size_t size) {
        check(size);
        if (size == 0) {
            std::free(p);
            return nullptr;
        }
        return std::realloc(p, size);
    }
    static void Free(void* p) { std::free(p); }

  private:
    void check(std::size_t size) const {
        if (size > cap_ && in_ != nullptr)
            throw input_error(
                fmt::format("a JSON string of more than {} bytes is over the limit (--max-string)", max_string_),
                *name_, in_->Tell());
    }
    std::size_t cap_ = SIZE_MAX, max_string_ = 0;
    const rapidjson::MemoryStream* in_ = nullptr;
    const std::string* name_ = nullptr;
};

using JsonReader = rapidjson::GenericReader<rapidjson::UTF8<>, rapidjson::UTF8<>, CappedAllocator>;

// Where the plain run of a JSON string that starts at `p` ends: at its closing quote, a
// backslash, a control character (an error to the parser), or `end`. RapidJSON scans 16 bytes
// at a time only in a NUL-terminated StringStream; a mapped file ends where it ends, so whole
// 16-byte pieces are loaded before its end and the rest byte by byte. Strings are most of a
// snapshot's JSON: byte by byte they took a third of the time.
inline const char* plain_run_end(const char* p, const char* end) {
#ifdef __SSE2__
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), below_space = _mm_set1_epi8(0x1F);
    for (; end - p >= 16; p += 16) {
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        // s < 0x20 exactly when max(s, 0x1F) == 0x1F (unsigned)
        const __m128i stop = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(s, quote), _mm_cmpeq_epi8(s, backslash)),
                                          _mm_cmpeq_epi8(_mm_max_epu8(s, below_space), below_space));
        if (const auto mask = static_cast<unsigned>(_mm_movemask_epi8(stop)); mask != 0) return p + __builtin_ctz(mask);
    }
#endif
    for (; p < end; ++p)
        if (const auto c = static_cast<unsigned char>(*p); c == '"' || c == '\\' || c < 0x20) break;
    return p;
}

}  // namespace memsnap::snapshot::detail

// RapidJSON's copy of a string's plain run into its stack, as one piece. At most 1 GiB at a
// time (lengths are 32-bit): RapidJSON's loop takes the next byte and asks for the next run.
namespace rapidjson {
template <>
template <>
inline void memsnap::snapshot::detail::JsonReader::ScanCopyUnescapedString<
    MemoryStream, memsnap::snapshot::detail::JsonReader::StackStream<char>>(
    MemoryStream& is, memsnap::snapshot::detail::JsonReader::StackStream<char>& os) {
    const char* const end = is.end_ - is.src_ > (1 << 30) ? is.src_ + (1 << 30) : is.end_;
    const char* const stop = memsnap::snapshot::detail::plain_run_end(is.src_, end);
    const auto plain = static_cast<SizeType>(stop - is.src_);
    std::memcpy(os.Push(plain), is.src_, plain);
    is.src_ = stop;
}
}  // namespace rapidjson

namespace memsnap::snapshot::detail {

namespace {

using pickle::Document;
using pickle::Kind;
using pickle::Value;

// Strings remembered by their length and first and last 8 bytes (the whole of a string of up
// to 16 bytes: keys, actions, most function names); a longer one is compared in full with the
// string remembered. The arena's own lookup hashes every string in full, and a dump repeats a
// few hundred keys, names and file names millions of times. Direct-mapped: a collision only
// costs a lookup in the arena.
class RecentStrings {
  public:
    template <class Make>
    Value get(const Document& doc, std::string_view s, Make&& make) {
        std::uint64_t first = 0, last = 0;
        if (s.size() <= 16) {
            std::memcpy(&first, s.data(), std::min<std::size_t>(s.size(), 8));
            if (s.size() > 8) std::memcpy(&last, s.data() + 8, s.size() - 8);
        } else {
            std::memcpy(&first, s.data(), 8);
            std::memcpy(&last, s.data() + s.size() - 8, 8);
        }
        const std::uint64_t h = (first * 0x9E3779B97F4A7C15ull) ^ (last * 0xC2B2AE3D27D4EB4Full) ^ s.size();
        Entry& e = entries_[(h * 0xFF51AFD7ED558CCDull) >> (64 - kBits)];
        if (e.length != s.size() || e.first != first || e.last != last || (s.size() > 16 && doc.text(e.value) != s))
            e = {first, last, s.size(), make()};
        return e.value;
    }

  private:
    static constexpr unsigned kBits = 12;
    struct Entry {
        std::uint64_t first = 0, last = 0;
        std::size_t length = SIZE_MAX;  // matches no string
        Value value;
    };
    std::vector<Entry> entries_ = std::vector<Entry>(std::size_t{1} << kBits);
};

// RapidJSON's SAX events, as the pickle machine would produce them: every complete value is
// sealed into the innermost open container, so the hook replaces frames, entries, blocks and
// segments as they close. Limits throw with the offset the parser has reached.
class SnapshotHandler {
  public:
    SnapshotHandler(Document& doc, pickle::SealHook* hook, const pickle::Limits& limits, const std::string& name,
                    const rapidjson::MemoryStream& in, std::uint64_t input_size,
                    const std::function<void(std::uint64_t)>& consumed)
        : doc_(doc),
          hook_(hook),
          limits_(limits),
          name_(name),
          in_(in),
          consumed_(consumed),
          held_limit_(limits.held_limit(input_size)) {}

    bool Null() { return add(Value::make_none()); }
    bool Bool(bool b) { return add(Value::make_bool(b)); }
    bool Int(int i) { return add(Value::make_int(i)); }
    bool Uint(unsigned u) { return add(Value::make_int(u)); }
    bool Int64(std::int64_t i) { return add(Value::make_int(i)); }
    bool Uint64(std::uint64_t u) {
        if (u <= static_cast<std::uint64_t>(INT64_MAX)) return add(Value::make_int(static_cast<std::int64_t>(u)));
        Value v;
        v.kind = Kind::big_integer;
        v.u = u;
        return add(v);
    }
    bool Double(double d) { return add(Value::make_float(d)); }
    bool RawNumber(const char*, rapidjson::SizeType, bool) { return false; }  // not asked for
    bool String(const char* s, rapidjson::SizeType length, bool) { return add(text(s, length)); }
    bool Key(const char* s, rapidjson::SizeType length, bool) { return add(text(s, length)); }
    bool StartObject() { return open(Kind::dict); }
    bool StartArray() { return open(Kind::list); }
    bool EndObject(rapidjson::SizeType) { return close(); }
    bool EndArray(rapidjson::SizeType) { return close(); }

    // Strings longer than this are refused; read_json's string reading leaves them to RapidJSON.
    std::uint64_t max_string_length() const { return limits_.max_string_length; }

  private:
    [[noreturn]] void refuse(std::string message) const { throw input_error(std::move(message), name_, in_.Tell()); }
    Value text(const char* s, std::size_t length) {
        if (length > limits_.max_string_length)
            refuse(fmt::format("a JSON string of {} bytes is over the limit (--max-string)", length));
        const auto make = [&] {
            const std::string_view text(s, length);
            if (!pickle::valid_utf8(text)) refuse("invalid JSON: a string is not valid UTF-8");
            return doc_.new_owned_string(text);
        };
        return recent_strings_.get(doc_, std::string_view(s, length), make);
    }
    bool open(Kind kind) {
        if (open_.size() + 1 > limits_.max_depth)
            refuse(fmt::format("JSON nesting deeper than {} levels (--max-depth)", limits_.max_depth));
        open_.push_back(doc_.new_container(kind));
        return true;
    }
    bool close() {
        const Value done = open_.back();
        open_.pop_back();
        return add(done);
    }
    // Stores a complete value in the innermost open container (sealing it first), or makes
    // it the root.
    bool add(const Value& v) {
        const Value stored = pickle::seal(doc_, v, hook_);
        // A container the hook replaced is reachable no more (JSON shares nothing): its slot
        // serves the next one, as in the pickle reader, or a dump's millions of frame and
        // entry dicts would each keep theirs.
        if (v.is_container() && stored.kind != v.kind) doc_.recycle_slot(v);
        if (open_.empty()) {
            doc_.root = stored;
            return true;
        }
        const Value& parent = open_.back();
        auto& slot = doc_.slot(parent);
        slot.depth = std::max<std::uint16_t>(slot.depth, static_cast<std::uint16_t>(doc_.depth(v) + 1));
        auto& items = doc_.mutable_items(parent);
        if (items.size() >= limits_.max_container_length)
            refuse(fmt::format("a JSON container holds more than {} items (--max-container)",
                               limits_.max_container_length));
        items.push_back(stored);
        doc_.count_items(1);
        if (doc_.held_bytes() > held_limit_)
            refuse(
                fmt::format("the file would make memsnap hold more than {} MiB of values at once: "
                            "snapshots hold far less, so it is damaged or crafted",
                            held_limit_ >> 20));
        if (in_.Tell() >= next_report_) [[unlikely]]
            report();
        return true;
    }
    // Tells `consumed_` of every whole MiB behind the parser: the pages there are released as
    // the pickle reader's are, or a JSON snapshot (some 30 times its pickle's size: JSON
    // shares nothing) would stay resident. Strings are copied out, so nothing points there.
    void report() {
        for (; next_report_ <= in_.Tell(); next_report_ += pickle::consumed_every)
            if (consumed_) consumed_(next_report_);
    }

    Document& doc_;
    pickle::SealHook* hook_;
    const pickle::Limits& limits_;
    const std::string& name_;
    const rapidjson::MemoryStream& in_;
    const std::function<void(std::uint64_t)>& consumed_;
    std::uint64_t held_limit_;
    std::uint64_t next_report_ = pickle::consumed_every;
    std::vector<Value> open_;
    RecentStrings recent_strings_;
};

// Iterative: nesting costs heap (bounded by --max-depth), never the call stack. Strings are
// checked to be UTF-8 by the handler, as the pickle reader checks them (RapidJSON's own check
// goes a character at a time). NaN and Infinity are what json.dump writes for such floats
// (Python's json.load reads them back). Not kParseFullPrecisionFlag: in RapidJSON 1.1.0 a
// fraction of some hundreds of digits crashes it (tests/malformed_test.cpp); the default is
// exact for the short decimals a snapshot holds, and no figure is a float.
constexpr unsigned kParseFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag;

}  // namespace
}  // namespace memsnap::snapshot::detail

// A string without escapes goes to the handler where it lies in the file, not through a copy
// in RapidJSON's stack: most of a snapshot's strings are keys, names and file names without
// one. The handler copies what it keeps. As in RapidJSON's own reading, the stream is past the
// closing quote while the handler looks at the string (the offset its refusals give). Escapes,
// errors, and strings over the limit (refused as they are copied) take RapidJSON's way.
namespace rapidjson {
template <>
template <>
inline void memsnap::snapshot::detail::JsonReader::ParseString<memsnap::snapshot::detail::kParseFlags, MemoryStream,
                                                               memsnap::snapshot::detail::SnapshotHandler>(
    MemoryStream& is, memsnap::snapshot::detail::SnapshotHandler& handler, bool isKey) {
    const char* const begin = is.src_ + 1;
    const char* const stop = memsnap::snapshot::detail::plain_run_end(begin, is.end_);
    const auto length = static_cast<std::uint64_t>(stop - begin);
    if (stop != is.end_ && *stop == '"' &&
        length <= std::min<std::uint64_t>(handler.max_string_length(), std::numeric_limits<SizeType>::max())) {
        is.src_ = stop + 1;
        const bool success = isKey ? handler.Key(begin, static_cast<SizeType>(length), false)
                                   : handler.String(begin, static_cast<SizeType>(length), false);
        if (RAPIDJSON_UNLIKELY(!success)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, is.Tell());
        return;
    }
    // RapidJSON 1.1.0's ParseString, as it reads into its stack.
    internal::StreamLocalCopy<MemoryStream> copy(is);
    MemoryStream& s(copy.s);
    s.Take();  // the opening quote
    StackStream<char> stackStream(stack_);
    ParseStringToStream<memsnap::snapshot::detail::kParseFlags, UTF8<>, UTF8<>>(s, stackStream);
    RAPIDJSON_PARSE_ERROR_EARLY_RETURN_VOID;
    const SizeType copied = static_cast<SizeType>(stackStream.Length()) - 1;
    const char* const str = stackStream.Pop();
    const bool success = isKey ? handler.Key(str, copied, true) : handler.String(str, copied, true);
    if (RAPIDJSON_UNLIKELY(!success)) RAPIDJSON_PARSE_ERROR(kParseErrorTermination, s.Tell());
}
}  // namespace rapidjson

namespace memsnap::snapshot::detail {
namespace {

// RapidJSON's English message ("Missing a comma or ']' after an array element.") as one of
// ours, saying so when the file ended first.
std::string parse_error_message(const rapidjson::ParseResult& result, std::size_t input_size) {
    std::string what = rapidjson::GetParseError_En(result.Code());
    if (!what.empty() && what.back() == '.') what.pop_back();
    if (!what.empty() && what[0] >= 'A' && what[0] <= 'Z') what[0] = static_cast<char>(what[0] - 'A' + 'a');
    return fmt::format("invalid JSON: {}{}", what, result.Offset() >= input_size ? " (the file ends there)" : "");
}

}  // namespace

void read_json(std::string_view input, Document& doc, pickle::SealHook* hook, const pickle::Limits& limits,
               const std::string& name, const std::function<void(std::uint64_t)>& consumed) {
    rapidjson::MemoryStream in(input.data(), input.size());
    if (input.starts_with("\xEF\xBB\xBF"))  // a UTF-8 byte order mark; offsets stay the file's
        for (int i = 0; i < 3; ++i) in.Take();
    SnapshotHandler handler(doc, hook, limits, name, in, input.size(), consumed);
    CappedAllocator stack_memory(limits, in, name);
    JsonReader reader(&stack_memory);
    const rapidjson::ParseResult result = reader.Parse<kParseFlags>(in, handler);
    if (result.IsError()) throw input_error(parse_error_message(result, input.size()), name, result.Offset());
}

}  // namespace memsnap::snapshot::detail
