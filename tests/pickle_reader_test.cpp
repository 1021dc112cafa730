// The pickle machine on hand-assembled byte strings: opcodes, memo semantics of both
// writers, integers, refusals with offsets.

#include "pickle/memo.hpp"
#include "support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/pickle/reader.hpp>

#include <cstring>

using namespace memsnap;
using pickle::Kind;
using pickle::Value;

namespace {

std::string bytes(std::initializer_list<int> list) {
    std::string out;
    for (int b : list) out.push_back(static_cast<char>(b));
    return out;
}

std::string short_str(const std::string& s) { return bytes({0x8c, static_cast<int>(s.size())}) + s; }

struct Decoded {
    std::string input;
    pickle::Document doc;
    pickle::StreamInfo info;
    explicit Decoded(std::string in) : input(std::move(in)), doc(input) { info = pickle::decode(doc, {}, nullptr); }
};

std::uint64_t error_offset(const std::string& input) {
    pickle::Document doc(input);
    try {
        pickle::decode(doc, {}, nullptr);
    } catch (const Error& e) {
        REQUIRE(e.byte_offset().has_value());
        return *e.byte_offset();
    }
    FAIL("decoded without error");
    return 0;
}

}  // namespace

TEST_CASE("integers: BININT1/2 / negative BININT / LONG1 of every length" * doctest::test_suite("unit")) {
    // [255, 65535, -1, LONG1 0 bytes, LONG1 -2 (1 byte), 2^40 (6 bytes), 2^63 (9 bytes)]
    const std::string in =
        bytes({0x80, 4, ']', '(', 'K', 255, 'M', 0xff, 0xff, 'J', 0xff, 0xff, 0xff, 0xff, 0x8a, 0, 0x8a, 1, 0xfe, 0x8a,
               6,    0, 0,   0,   0,   0,   1,   0x8a, 9,    0,   0,    0,    0,    0,    0,    0, 0x80, 0, 'e',  '.'});
    Decoded d(in);
    const auto& items = d.doc.items(d.doc.root);
    REQUIRE(items.size() == 7);
    CHECK(items[0].i == 255);
    CHECK(items[1].i == 65535);
    CHECK(items[2].i == -1);
    CHECK(items[3].i == 0);
    CHECK(items[4].i == -2);
    CHECK(items[5].i == (std::int64_t{1} << 40));
    CHECK(items[6].kind == Kind::big_integer);
    CHECK(items[6].u == (std::uint64_t{1} << 63));
    CHECK(d.info.long1_ops == 4);
}

TEST_CASE("BINFLOAT is big-endian / booleans and None" * doctest::test_suite("unit")) {
    double value = 0.5;
    std::uint64_t raw;
    std::memcpy(&raw, &value, 8);
    std::string be;
    for (int k = 7; k >= 0; --k) be.push_back(static_cast<char>((raw >> (8 * k)) & 0xff));
    const std::string in = bytes({0x80, 2, ']', '(', 'G'}) + be + bytes({0x88, 0x89, 'N', 'e', '.'});
    Decoded d(in);
    const auto& items = d.doc.items(d.doc.root);
    REQUIRE(items.size() == 4);
    CHECK(items[0].d == 0.5);
    CHECK(items[1].i == 1);
    CHECK(items[2].i == 0);
    CHECK(items[3].kind == Kind::none);
}

TEST_CASE("Python writer: containers memoized before they are filled share by reference" *
          doctest::test_suite("unit")) {
    // x = ["a"]; root = [x, x] with MEMOIZE before filling, as Python protocol 4 writes it.
    const std::string in =
        bytes({0x80, 4, ']', 0x94, '(', ']', 0x94}) + short_str("a") + bytes({0x94, 'a', 'h', 1, 'e', '.'});
    Decoded d(in);
    const auto& items = d.doc.items(d.doc.root);
    REQUIRE(items.size() == 2);
    CHECK(items[0].u == items[1].u);  // the same container, not a copy
    CHECK(d.doc.text(d.doc.items(items[0])[0]) == "a");
    CHECK(d.info.memo_before_fill == 2);
    CHECK(d.info.writer() == "Python pickle");
}

TEST_CASE("C++ writer: BINPUT after completion / strings memoized by value / 8-byte LONG1" *
          doctest::test_suite("unit")) {
    // root = {"k": [2^40], "j": "k"}: EMPTY_DICT MARK ... SETITEMS, BINPUT after the list.
    const std::string in =
        bytes({0x80, 2, '}', '(', 'X', 1,   0, 0,   0, 'k', 'q', 0, ']', '(', 0x8a, 8,   0, 0,   0,  0,
               0,    1, 0,   0,   'e', 'q', 1, 'X', 1, 0,   0,   0, 'j', 'q', 2,    'h', 0, 'u', '.'});
    Decoded d(in);
    const Value* list = d.doc.find(d.doc.root, "k");
    REQUIRE(list != nullptr);
    CHECK(d.doc.items(*list)[0].i == (std::int64_t{1} << 40));
    const Value* j = d.doc.find(d.doc.root, "j");
    REQUIRE(j != nullptr);
    CHECK(d.doc.text(*j) == "k");
    CHECK(d.info.memo_after_fill == 1);
    CHECK(d.info.writer() == "torch C++ pickler");
}

TEST_CASE("LIST / DICT / POP / POP_MARK / DUP / FRAME and trailing bytes" * doctest::test_suite("unit")) {
    const std::string in = bytes({0x80, 4,   0x95, 8, 0,   0,   0,   0, 0,   0,   0,   '(', 'K', 1, 'K',
                                  2,    'l', 'K',  9, '0', '(', 'K', 7, '1', '2', '0', '.', 0,   0, 0});
    Decoded d(in);
    CHECK(d.doc.items(d.doc.root).size() == 2);
    CHECK(d.info.frame_ops == 1);
    CHECK(d.info.trailing_bytes == 3);
    const std::string dict = bytes({0x80, 2, '(', 0x8c, 1, 'a', 'K', 1, 'd', '.'});
    Decoded dd(dict);
    REQUIRE(dd.doc.find(dd.doc.root, "a") != nullptr);
    CHECK(dd.doc.find(dd.doc.root, "a")->i == 1);
}

TEST_CASE("refusals carry the offset of the offending opcode" * doctest::test_suite("unit")) {
    CHECK(error_offset(bytes({0x80, 2, 'c', 'o', 's', '\n', 's', 'y', 's', 't', 'e', 'm', '\n', '.'})) == 2);
    CHECK(error_offset(bytes({0x80, 4, 0x8c, 1, 'a', 0x8c, 1, 'b', 0x93, '.'})) == 8);
    CHECK(error_offset(bytes({0x80, 2, 'K', 1, 0xff})) == 4);                 // unknown opcode
    CHECK(error_offset(bytes({0x80, 2, 'X', 10, 0, 0, 0, 'a'})) == 2);        // truncated string
    CHECK(error_offset(bytes({0x80, 2, 'h', 3, '.'})) == 2);                  // memo never stored
    CHECK(error_offset(bytes({0x80, 2, 'e', '.'})) == 2);                     // APPENDS, no MARK
    CHECK(error_offset(bytes({0x80, 2, ']', 'K', 1})) == 5);                  // no STOP
    CHECK(error_offset(bytes({0x80, 2, ']', 0x94, 'h', 0, 'a', '.'})) == 6);  // list in itself
    CHECK(error_offset(bytes({0x80, 2, 0x8c, 2, 0xc3, 0x28, '.'})) == 2);     // invalid UTF-8
    CHECK(error_offset(bytes({0x80, 9, '.'})) == 0);                          // protocol 9
    CHECK(error_offset("") == 0);
}

TEST_CASE("a sealed container cannot be changed afterwards" * doctest::test_suite("unit")) {
    // x = []; root = [x]; then APPEND to x through the memo.
    const std::string in = bytes({0x80, 4, ']', 0x94, ']', 0x94, 'a', 'h', 1, 'K', 1, 'a', '.'});
    pickle::Document doc(in);
    CHECK_THROWS_AS(pickle::decode(doc, {}, nullptr), Error);
}

namespace {

// Turns {"k": n} into opaque(1, n) and a list literal of such values into opaque(2, sum):
// enough to see which values a list literal was read from.
struct SummingHook : pickle::SealHook {
    std::optional<Value> on_seal(const pickle::Document& doc, const Value& container) override {
        if (container.kind != Kind::dict) return std::nullopt;
        const Value* n = doc.find(container, "k");
        if (n == nullptr || n->kind != Kind::integer) return std::nullopt;
        return Value::make_opaque(1, static_cast<std::uint64_t>(n->i));
    }
    std::optional<Value> on_list_literal(const pickle::Document&, std::span<const Value> items) override {
        std::uint64_t sum = 0;
        for (const Value& v : items) sum += v.u;
        return Value::make_opaque(2, sum);
    }
};

// SummingHook that counts the list literals it was asked to replace.
struct CountingHook : SummingHook {
    int literals = 0;
    std::optional<Value> on_list_literal(const pickle::Document& d, std::span<const Value> items) override {
        ++literals;
        return SummingHook::on_list_literal(d, items);
    }
};

}  // namespace

TEST_CASE("a list literal read again after a PUT over one of its memo entries sees the new value" *
          doctest::test_suite("unit")) {
    // memo1 = {"k": 5}, memo2 = {"k": 7}; root = [memo1, memo2, [memo1], memo2, [memo1]] with
    // a BINPUT of memo2 into slot 1 before the second literal. The reader reuses a literal
    // it has seen by its memo indices; the PUT must make it read them again.
    const std::string in = bytes({0x80, 4, ']', 0x94, '(', '}', 0x94}) + short_str("k") +
                           bytes({'K', 5, 's', '}', 0x94}) + short_str("k") +
                           bytes({'K', 7, 's', ']', '(', 'h', 1, 'e', 'h', 2, 'q', 1, ']', '(', 'h', 1, 'e', 'e', '.'});
    pickle::Document doc(in);
    SummingHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 5);
    CHECK(items[2].tag == 2);
    CHECK(items[2].u == 5);
    CHECK(items[4].tag == 2);
    CHECK(items[4].u == 7);
}

TEST_CASE("a repeated list literal gives the hook's value without asking it again" * doctest::test_suite("unit")) {
    // root = [memo1, [memo1, memo1], [memo1, memo1]]: the second literal comes from the cache
    // of memo runs and must equal the first.
    const std::string in = bytes({0x80, 4, ']', 0x94, '(', '}', 0x94}) + short_str("k") +
                           bytes({'K', 3, 's', ']', '(', 'h', 1, 'h', 1, 'e', ']', '(', 'h', 1, 'h', 1, 'e', 'e', '.'});
    pickle::Document doc(in);
    CountingHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 3);
    CHECK(items[1].tag == 2);
    CHECK(items[1].u == 6);
    CHECK(items[2].u == 6);
    CHECK(hook.literals == 1);
}

TEST_CASE("list literals that differ in one item are remembered side by side" * doctest::test_suite("unit")) {
    // memo1 = {"k": 1}, memo2 = {"k": 2}; then, for each position d of 40, the run of forty
    // memo1 and the same run with memo2 at d, in turn: 41 distinct runs, each asked of the
    // hook once. (The cache entry used to come from bits of the run's hash that some single
    // positions did not reach, so 11 of these runs and the all-memo1 run evicted each other.)
    std::string in = bytes({0x80, 4, ']', 0x94, '(', '}', 0x94}) + short_str("k") + bytes({'K', 1, 's', '}', 0x94}) +
                     short_str("k") + bytes({'K', 2, 's'});
    const auto list = [](int differing) {
        std::string out = bytes({']', '('});
        for (int i = 0; i < 40; ++i) out += bytes({'h', i == differing ? 2 : 1});
        return out + "e";
    };
    for (int d = 0; d < 40; ++d) in += list(-1) + list(d) + list(-1) + list(d);
    in += bytes({'e', '.'});
    pickle::Document doc(in);
    CountingHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 2 + 160);
    for (std::size_t i = 2; i < items.size(); ++i) {
        CAPTURE(i);
        CHECK(items[i].u == ((i - 2) % 2 == 0 ? 40u : 41u));
    }
    CHECK(hook.literals == 41);
}

namespace {

// Replaces a dict {"k": n, ...} read in one piece by opaque(3, n + 100 * list sum), and
// counts how the reader offered it.
struct DictHook : SummingHook {
    int dict_literals = 0;
    int sealed_dicts = 0;
    std::optional<Value> on_seal(const pickle::Document& doc, const Value& container) override {
        if (container.kind == Kind::dict) ++sealed_dicts;
        return SummingHook::on_seal(doc, container);
    }
    std::optional<Value> on_dict_literal(const pickle::Document& doc, std::span<const Value> kv) override {
        ++dict_literals;
        std::uint64_t n = 0;
        for (std::size_t i = 0; i + 1 < kv.size(); i += 2) {
            if (doc.text(kv[i]) == "k" && kv[i + 1].kind == Kind::integer) n += static_cast<std::uint64_t>(kv[i + 1].i);
            if (kv[i + 1].kind == Kind::opaque && kv[i + 1].tag == 2) n += 100 * kv[i + 1].u;
        }
        return Value::make_opaque(3, n);
    }
};

}  // namespace

TEST_CASE("a dict read in one piece takes its memo index before the lists inside it" * doctest::test_suite("unit")) {
    // memo1 "k", memo2 "f", memo3 {"k": 4}, memo4 {"k": 300 (LONG1), "f": memo5 = [memo3]},
    // then references to memo4 and memo5: the dict and its list, numbered as the general
    // path numbers them.
    const std::string in = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") + bytes({0x94}) + short_str("f") +
                           bytes({0x94, '}', 0x94, '(', 'h',  1,   'K', 4, 'u', '}', 0x94, '(', 'h', 1, 0x8A, 2,  0x2C,
                                  0x01, 'h', 2,    ']', 0x94, '(', 'h', 3, 'e', 'u', 'h',  4,   'h', 5, 'e',  '.'});
    pickle::Document doc(in);
    DictHook hook;
    const auto info = pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 6);
    CHECK(items[2].tag == 3);
    CHECK(items[2].u == 4);
    CHECK(items[3].tag == 3);
    CHECK(items[3].u == 300 + 100 * 4);
    CHECK(items[4].tag == 3);  // memo4: the dict
    CHECK(items[4].u == items[3].u);
    CHECK(items[5].tag == 2);  // memo5: its list
    CHECK(items[5].u == 4);
    CHECK(hook.dict_literals == 2);
    CHECK(hook.sealed_dicts == 0);
    CHECK(info.long1_ops == 1);
    CHECK(info.long1_not_8_bytes == 1);
    CHECK(info.memoize_ops == 6);  // the root, two strings, two dicts, the list
}

TEST_CASE("a dict read in one piece after a PUT over its key's memo entry reads the new key" *
          doctest::test_suite("unit")) {
    // memo1 "k"; {memo1: 4}; then "x" PUT into memo1; {memo1: 5}; eight None. The reader remembers the key
    // it read at each place of a dict by memo index; the PUT must make it read it again.
    const std::string in = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") +
                           bytes({0x94, '}', 0x94, '(', 'h', 1, 'K', 4, 'u'}) + short_str("x") +
                           bytes({'q', 1, '}', 0x94, '(', 'h', 1, 'K', 5, 'u'}) + std::string(8, 'N') +
                           "e.";  // None x 8: a literal looks 9 bytes ahead
    pickle::Document doc(in);
    DictHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 12);
    CHECK(hook.dict_literals == 2);
    CHECK(items[1].tag == 3);
    CHECK(items[1].u == 4);
    CHECK(items[3].tag == 3);
    CHECK(items[3].u == 0);  // its key is "x" now: not counted
}

namespace {

// DictHook that also keeps the text of every string value it was given.
struct StringsSeenHook : DictHook {
    std::vector<std::string> strings;
    std::optional<Value> on_dict_literal(const pickle::Document& doc, std::span<const Value> kv) override {
        for (std::size_t i = 1; i < kv.size(); i += 2)
            if (kv[i].kind == Kind::string) strings.emplace_back(doc.text(kv[i]));
        return DictHook::on_dict_literal(doc, kv);
    }
};

}  // namespace

TEST_CASE("a dict read in one piece takes strings written in full and memoizes them in order with its lists" *
          doctest::test_suite("unit")) {
    // memo1 "k", memo2 "a", memo3 "b", memo4 {"k": 4}; then memo5 {"k": memo6 "xy" (written in
    // full, MEMOIZE), "a": memo7 [memo4], "b": "zz" (written in full, not memoized)}, and
    // references to memo5, memo6 and memo7, numbered as the general path numbers them. A
    // writer that does not share string objects writes a trace entry's action so.
    for (const bool long_form : {false, true}) {
        CAPTURE(long_form);
        const std::string zz = long_form ? bytes({'X', 2, 0, 0, 0}) + "zz" : short_str("zz");
        const std::string in = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") + bytes({0x94}) + short_str("a") +
                               bytes({0x94}) + short_str("b") +
                               bytes({0x94, '}', 0x94, '(', 'h', 1, 'K', 4, 'u', '}', 0x94, '(', 'h', 1}) +
                               short_str("xy") + bytes({0x94, 'h', 2, ']', 0x94, '(', 'h', 4, 'e', 'h', 3}) + zz +
                               bytes({'u', 'h', 5, 'h', 6, 'h', 7, 'e', '.'});
        pickle::Document doc(in);
        StringsSeenHook hook;
        const auto info = pickle::decode(doc, {}, &hook);
        const auto& items = doc.items(doc.root);
        REQUIRE(items.size() == 8);
        CHECK(items[3].tag == 3);  // memo4
        CHECK(items[3].u == 4);
        CHECK(items[4].tag == 3);  // the dict: no integer "k", its list [memo4]
        CHECK(items[4].u == 100 * 4);
        CHECK(items[5].tag == 3);  // memo5: the dict
        CHECK(items[5].u == items[4].u);
        REQUIRE(items[6].kind == Kind::string);  // memo6: the string written in full
        CHECK(doc.text(items[6]) == "xy");
        CHECK(items[7].tag == 2);  // memo7: the list
        CHECK(items[7].u == 4);
        CHECK(hook.dict_literals == 2);
        CHECK(hook.sealed_dicts == 0);
        CHECK(hook.strings == std::vector<std::string>{"xy", "zz"});
        CHECK(info.memoize_ops == 8);  // the root, three keys, two dicts, "xy", the list
    }
}

TEST_CASE("a string written in full inside a dict literal is refused as the general path refuses it" *
          doctest::test_suite("unit")) {
    // {"k": <0xFF 0xFE, not UTF-8>}: the peephole leaves it to the general path, whose error
    // names the string's opcode.
    const std::string head = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") + bytes({0x94, '}', 0x94, '(', 'h', 1});
    const std::string in = head + bytes({0x8c, 2, 0xFF, 0xFE, 0x94, 'u', 'e', '.'});
    pickle::Document doc(in);
    DictHook hook;
    try {
        pickle::decode(doc, {}, &hook);
        FAIL("decoded without error");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("UTF-8") != std::string::npos);
        REQUIRE(e.byte_offset().has_value());
        CHECK(*e.byte_offset() == head.size());
    }
}

TEST_CASE("a dict literal reads LONG1 values of every length and sign exactly" * doctest::test_suite("unit")) {
    // [{"k": v} for v in values], each dict read in one piece: the hook gets each v as an
    // int.
    std::vector<std::int64_t> values;
    for (unsigned n = 1; n <= 8; ++n) {
        const std::int64_t top = n == 8 ? INT64_MAX : (std::int64_t{1} << (8 * n - 1)) - 1;
        for (const std::int64_t v : {top, -top - 1, std::int64_t{-1}, std::int64_t{5}, top / 3, -(top / 5)})
            values.push_back(v);
    }
    std::string in = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") + bytes({0x94});
    std::vector<unsigned> lengths;
    for (std::size_t i = 0; i < values.size(); ++i) {
        const auto n = static_cast<unsigned>(i / 6 + 1);
        lengths.push_back(n);
        in += bytes({'}', '(', 'h', 1, 0x8A, static_cast<int>(n)});
        for (unsigned b = 0; b < n; ++b) in += static_cast<char>(static_cast<std::uint64_t>(values[i]) >> (8 * b));
        in += 'u';
    }
    // -2 where 9 bytes are left from its LONG1 (3 of them after STOP): the 8-byte load would
    // pass the end, so the byte-wise read takes it.
    in += bytes({'}', '(', 'h', 1, 0x8A, 1, 0xFE, 'u', 'e', '.', 0, 0, 0});
    values.push_back(-2);
    pickle::Document doc(in);
    DictHook hook;
    const auto info = pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == values.size() + 1);  // the "k" string first
    CHECK(hook.dict_literals == static_cast<int>(values.size()));
    for (std::size_t i = 0; i < values.size(); ++i) {
        CAPTURE(i);
        CAPTURE(values[i]);
        CHECK(items[i + 1].tag == 3);
        CHECK(items[i + 1].u == static_cast<std::uint64_t>(values[i]));
    }
    CHECK(info.long1_ops == values.size());
}

TEST_CASE("a dict with an opaque key or more than 16 pairs is built by the general path" *
          doctest::test_suite("unit")) {
    // memo1 "k", memo2 = {"k": 4} (read in one piece: opaque); then {memo2: 1} and a dict of
    // 17 pairs: neither is a literal, both are built and sealed.
    std::string in = bytes({0x80, 4, ']', 0x94, '('}) + short_str("k") +
                     bytes({0x94, '}', 0x94, '(', 'h', 1, 'K', 4, 'u', '}', '(', 'h', 2, 'K', 1, 'u', '}', '('});
    for (int i = 0; i < 17; ++i) in += bytes({'h', 1, 'K', i});
    in += bytes({'u', 'e', '.'});
    pickle::Document doc(in);
    DictHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 4);
    CHECK(hook.dict_literals == 1);
    CHECK(hook.sealed_dicts == 2);
    CHECK(items[2].kind == Kind::dict);
    CHECK(items[3].tag == 1);  // sealed by SummingHook: {"k": 16}, the last value of the key
    CHECK(items[3].u == 16);
}

TEST_CASE("a dict that is not a literal is built and sealed as usual" * doctest::test_suite("unit")) {
    // memo1 = {"k": 1.5} (a float), memo3 = {"k": memo1} (a container value): both built.
    const std::string in =
        bytes({0x80, 4, ']', 0x94, '(', '}', 0x94}) + short_str("k") +
        bytes({0x94, 'G', 0x3F, 0xF8, 0, 0, 0, 0, 0, 0, 's', '}', 0x94, '(', 'h', 2, 'h', 1, 'u', 'e', '.'});
    pickle::Document doc(in);
    DictHook hook;
    pickle::decode(doc, {}, &hook);
    const auto& items = doc.items(doc.root);
    REQUIRE(items.size() == 2);
    CHECK(hook.dict_literals == 0);
    CHECK(hook.sealed_dicts == 2);
    CHECK(items[0].kind == Kind::dict);
    CHECK(items[1].kind == Kind::dict);
    CHECK(doc.find(items[1], "k")->u == items[0].u);
}

TEST_CASE("memo entries that do not pack in 4 bytes come back whole" * doctest::test_suite("unit")) {
    // Opaque ids past 2^25 and tags past 15, a float, a big container id: the side tables.
    pickle::Memo memo;
    const Value big_opaque = Value::make_opaque(4, std::uint64_t{1} << 30);
    const Value wide_tag = Value::make_opaque(200, 7);
    const Value small_opaque = Value::make_opaque(2, 12345);
    Value text;
    text.kind = Kind::string;
    text.u = std::uint64_t{3} << 32;  // an input offset past 4 GiB
    text.length = 17;
    Value big_list;
    big_list.kind = Kind::list;
    big_list.u = std::uint64_t{1} << 40;
    const std::vector<Value> values = {big_opaque, wide_tag, small_opaque, text, big_list, Value::make_float(2.5)};
    for (std::size_t i = 0; i < values.size(); ++i) REQUIRE(memo.put(i, values[i]));
    for (std::size_t i = 0; i < values.size(); ++i) {
        const Value v = memo.get(i);
        CHECK(v.kind == values[i].kind);
        CHECK(v.tag == values[i].tag);
        CHECK(v.length == values[i].length);
        CHECK(v.u == values[i].u);
    }
    CHECK_FALSE(memo.defined(values.size()));
    CHECK(memo.opaque_overwrites() == 0);
    REQUIRE(memo.put(2, wide_tag));  // over an opaque entry (packed)
    CHECK(memo.opaque_overwrites() == 1);
    REQUIRE(memo.put(0, small_opaque));  // over an opaque entry in the side table
    CHECK(memo.opaque_overwrites() == 2);
}

TEST_CASE("equal short strings of the input share one memo number while the first one's bytes are kept" *
          doctest::test_suite("unit")) {
    // torch 2.5 on writes a new "N/A" in every trace entry: one number for all, not 8 bytes each.
    const std::string long_text(40, 'x');
    const std::string input = "N/A--N/A--N/B--" + long_text + "--" + long_text + "--N/A";
    const auto at = [&](std::uint64_t offset, std::uint32_t length) {
        Value v;
        v.kind = Kind::string;
        v.u = offset;
        v.length = length;
        return v;
    };
    const std::uint64_t second_long = 15 + long_text.size() + 2;
    const std::uint64_t last = input.size() - 3;
    pickle::Memo memo;
    memo.set_input(input);
    REQUIRE(memo.put(0, at(0, 3)));
    REQUIRE(memo.put(1, at(5, 3)));
    REQUIRE(memo.put(2, at(10, 3)));
    REQUIRE(memo.put(3, at(15, static_cast<std::uint32_t>(long_text.size()))));
    REQUIRE(memo.put(4, at(second_long, static_cast<std::uint32_t>(long_text.size()))));
    CHECK(memo.get(0).u == 0);
    CHECK(memo.get(1).u == 0);   // equal to the first: its number
    CHECK(memo.get(2).u == 10);  // "N/B"
    CHECK(memo.get(3).u == 15);
    CHECK(memo.get(4).u == second_long);  // long strings are not compared
    CHECK(memo.get(1).length == 3);
    // Past the offset the reader gave back, the first "N/A"'s bytes may be gone: not read.
    memo.input_released_before(8);
    REQUIRE(memo.put(5, at(last, 3)));
    CHECK(memo.get(5).u == last);
    REQUIRE(memo.put(6, at(5, 3)));  // below the released offset itself: a number of its own
    CHECK(memo.get(6).u == 5);
}

TEST_CASE("memo blocks behind the reader are coded in 2 bytes an entry and read back exactly" *
          doctest::test_suite("unit")) {
    constexpr std::size_t block = 1024;
    const std::string input = "N/A--N/A--frames--size";
    const auto string_at = [](std::uint64_t offset, std::uint32_t length) {
        Value v;
        v.kind = Kind::string;
        v.u = offset;
        v.length = length;
        return v;
    };
    pickle::Memo memo;
    memo.set_input(input);
    Value hole;
    hole.kind = Kind::unset;
    std::vector<Value> expected;  // by index
    const auto put = [&](std::uint64_t index, const Value& v, const Value& reads_as) {
        REQUIRE(memo.put(index, v));
        if (expected.size() <= index) expected.resize(index + 1, hole);
        expected[index] = reads_as;
    };
    // Blocks 0-5: a trace's runs (event k, a stack of 40, a shared "N/A"), with a hole, a
    // float and a big container now and then: coded.
    std::uint64_t next = 0;
    for (std::uint64_t k = 0; next < 6 * block; ++k) {
        put(next++, Value::make_opaque(4, k), Value::make_opaque(4, k));
        put(next++, Value::make_opaque(2, (k * 7) % 40), Value::make_opaque(2, (k * 7) % 40));
        put(next++, string_at(k % 2 == 0 ? 0 : 5, 3), string_at(0, 3));  // equal strings share one number
        if (k % 97 == 0)
            put(next++, Value::make_float(0.5 * static_cast<double>(k)),
                Value::make_float(0.5 * static_cast<double>(k)));
        if (k % 131 == 0) ++next;  // a hole
    }
    // Blocks 6-7: events far apart (past the codes' reach) and many distinct stacks: too
    // many distinct entries for the dictionary, so they stay raw.
    for (std::uint64_t k = 0; next < 8 * block; ++k) {
        const Value v = Value::make_opaque(k % 2 == 0 ? 4 : 2, k * 10'007);
        put(next++, v, v);
    }
    // Blocks 8 on: events again, so that blocks up to 8 have coding_lag blocks after them. Block 8
    // starts with events at the edges of a run's reach from its first (8,192 steps back and
    // 8,191 on) and one step past each, which go to the dictionary.
    constexpr std::uint64_t first_event = 5'000'000;
    for (const std::uint64_t k :
         {first_event, first_event - 8192, first_event + 8191, first_event + 8192, first_event - 8193}) {
        const Value v = Value::make_opaque(4, k);
        put(next++, v, v);
    }
    for (std::uint64_t k = 1; next < (8 + pickle::Memo::coding_lag) * block + 5; ++k) {
        const Value v = Value::make_opaque(4, first_event + k);
        put(next++, v, v);
    }
    expected.resize(memo.size(), hole);
    const auto matches = [&](std::uint64_t i) {
        const Value v = memo.get(i);
        return v.kind == expected[i].kind && v.tag == expected[i].tag && v.u == expected[i].u &&
               v.length == expected[i].length;
    };
    const auto all_match = [&] {
        for (std::uint64_t i = 0; i < memo.size(); ++i) {
            if (memo.defined(i) != (expected[i].kind != Kind::unset)) return false;
            if (memo.defined(i) && !matches(i)) return false;
        }
        return true;
    };
    CHECK(memo.coded_entries() == 7 * block);  // blocks 0-5 and 8; not 6 and 7
    // A PUT into a coded block (a container sealed late) changes that entry only.
    const Value sealed = Value::make_opaque(3, 77);
    put(block + 1, sealed, sealed);
    CHECK(memo.opaque_overwrites() == 1);
    CHECK(memo.coded_entries() == 6 * block);  // block 1 is raw again
    Value v;
    CHECK(memo.lookup(3 * block + 2, v));
    CHECK(v.kind == expected[3 * block + 2].kind);
    CHECK(v.u == expected[3 * block + 2].u);
    CHECK_FALSE(memo.lookup(memo.size(), v));
    CHECK(all_match());
    // Every block was read more than 64 times there, so coded ones were made raw: the same.
    CHECK(memo.coded_entries() == 0);
    CHECK(all_match());
}
