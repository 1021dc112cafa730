// Hostile and malformed inputs: each fail_* file is refused with a one-line error that names
// the file (and the byte offset where the fixture gives one); each pass_* file loads.

#include "support.hpp"

#include <memsnap/error.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

using namespace memsnap;

TEST_CASE("malformed corpus: fail_* rejected with file and offset / pass_* loaded" * doctest::test_suite("unit")) {
    const auto dir = test::fixtures_dir() / "malformed";
    const auto expected = nlohmann::json::parse(test::read_text(dir / "expected.json"));
    REQUIRE(expected.size() >= 40);
    for (const auto& [key, entry] : expected.items()) {
        const std::string name = key;  // a copy: clang 14 cannot capture a structured binding
        CAPTURE(name);
        const std::string path = (dir / name).string();
        if (entry.at("expect") == "pass") {
            CHECK_NOTHROW(snapshot::load_snapshot(path));
            continue;
        }
        bool threw = false;
        try {
            snapshot::load_snapshot(path);
        } catch (const Error& e) {
            threw = true;
            CHECK(e.kind() == ErrorKind::input);
            CHECK(e.file() == path);
            const std::string line = e.describe();
            CHECK(line.find('\n') == std::string::npos);
            CHECK(line.starts_with(path + ": "));
            if (!entry.at("offset").is_null()) {
                REQUIRE(e.byte_offset().has_value());
                CHECK(*e.byte_offset() == entry.at("offset").get<std::uint64_t>());
            }
        }
        CHECK(threw);
    }
}

TEST_CASE("code-loading opcodes are named in the error" * doctest::test_suite("unit")) {
    const auto dir = test::fixtures_dir() / "malformed";
    const std::pair<const char*, const char*> cases[] = {
        {"fail_global_os_system.pickle", "GLOBAL would load code; memsnap reads data only"},
        {"fail_stack_global.pickle", "STACK_GLOBAL would load code; memsnap reads data only"},
        {"fail_reduce.pickle", "REDUCE would load code"},
        {"fail_build.pickle", "BUILD would load code"},
        {"fail_newobj.pickle", "NEWOBJ would load code"},
        {"fail_newobj_ex.pickle", "NEWOBJ_EX would load code"},
        {"fail_inst.pickle", "INST would load code"},
        {"fail_obj.pickle", "OBJ would load code"},
        {"fail_persid.pickle", "PERSID would load code"},
        {"fail_binpersid.pickle", "BINPERSID would load code"},
        {"fail_ext1.pickle", "EXT1 would load code"},
        {"fail_ext2.pickle", "EXT2 would load code"},
        {"fail_ext4.pickle", "EXT4 would load code"},
    };
    for (const auto& [name, message] : cases) {
        const auto file = name;  // a copy: clang 14 cannot capture a structured binding
        CAPTURE(file);
        try {
            snapshot::load_snapshot((dir / file).string());
            FAIL("accepted a code-loading pickle");
        } catch (const Error& e) {
            CHECK(std::string(e.what()).find(message) != std::string::npos);
        }
    }
}

TEST_CASE("a pickle whose payload would create a file does not create it" * doctest::test_suite("cli")) {
    const std::filesystem::path marker = "/tmp/memsnap_pwned_by_fixture";
    std::filesystem::remove(marker);
    for (const char* file : {"fail_global_os_system.pickle", "fail_stack_global.pickle"}) {
        const auto result = test::run_memsnap("info " + test::quote(test::fixtures_dir() / "malformed" / file));
        CHECK(result.exit_code == 2);
        CHECK(result.err.starts_with("memsnap: error: "));
        CHECK(result.err.find("would load code") != std::string::npos);
    }
    CHECK_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("limits are enforced and can be raised" * doctest::test_suite("unit")) {
    const auto path = (test::fixtures_dir() / "snapshots" / "gen_torch2.5_settings.pickle").string();
    snapshot::LoadOptions tight;
    tight.limits.max_depth = 3;
    CHECK_THROWS_AS(snapshot::load_snapshot(path, tight), Error);
    snapshot::LoadOptions short_strings;
    short_strings.limits.max_string_length = 4;
    CHECK_THROWS_AS(snapshot::load_snapshot(path, short_strings), Error);
    snapshot::LoadOptions few_memo;
    few_memo.limits.max_memo_entries = 10;
    CHECK_THROWS_AS(snapshot::load_snapshot(path, few_memo), Error);
    snapshot::LoadOptions small_containers;
    small_containers.limits.max_container_length = 3;
    CHECK_THROWS_AS(snapshot::load_snapshot(path, small_containers), Error);
    CHECK_NOTHROW(snapshot::load_snapshot(path, {}));
    // The deep-nesting fixture loads once the depth limit is raised above its depth? No: it
    // is a bare nest of lists, not a snapshot; raising the limit moves the error elsewhere.
    const auto deep = (test::fixtures_dir() / "malformed" / "fail_deep_nesting.pickle").string();
    try {
        snapshot::load_snapshot(deep);
        FAIL("deep nesting accepted");
    } catch (const Error& e) {
        CHECK(std::string(e.what()).find("--max-depth") != std::string::npos);
    }
}

TEST_CASE("a JSON snapshot that cannot be read says where and why" * doctest::test_suite("unit")) {
    struct Case {
        std::string text;
        std::uint64_t offset;
        const char* says;
    };
    const std::string head = R"({"segments": [], "device_traces": [], )";
    const Case cases[] = {
        {head + R"("x": 1e999999})", head.size() + 5, "invalid JSON: number too big"},
        {R"({"segments": [)", 14, "(the file ends there)"},
        {R"({"segments": [1,, 2]})", 16, "invalid JSON: invalid value"},
        {head + "\"x\": \"\xff\"}", head.size() + 8, "invalid JSON: a string is not valid UTF-8"},
        {head + R"("x": 1} [])", head.size() + 8, "invalid JSON: the document root must not be followed"},
        {head + R"("x": [[[[[[[[1]]]]]]]]})", head.size() + 10, "JSON nesting deeper than 6 levels (--max-depth)"},
    };
    snapshot::LoadOptions shallow;
    shallow.limits.max_depth = 6;
    for (const auto& c : cases) {
        CAPTURE(c.text);
        try {
            snapshot::load_snapshot_bytes(c.text, "bad.json", shallow);
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::input);
            CHECK(e.describe().starts_with(fmt::format("bad.json: byte {}: ", c.offset)));
            CHECK(e.describe().find(c.says) != std::string::npos);
        }
    }
}

TEST_CASE("JSON as json.dump writes it: NaN and Infinity / a byte order mark / escapes" * doctest::test_suite("unit")) {
    const std::string text =
        "\xEF\xBB\xBF"
        R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, )"
        R"("size": 512, "stream": 0, "time_us": 1, "frames": [{"filename": "/p/\u00e9t\u00e9.py", )"
        R"("name": "f\ud83d\ude00", "line": 3}]}]], "x": [NaN, Infinity, -Infinity, 1.5e-05]})";
    const auto snap = snapshot::load_snapshot_bytes(text, "dump.json");
    REQUIRE(snap.events.size() == 1);
    const auto& frame = snap.frames[snap.stacks.frames(snap.events[0].stack)[0]];
    CHECK(snap.str(frame.filename) == "/p/\u00e9t\u00e9.py");
    CHECK(snap.str(frame.name) == "f\xF0\x9F\x98\x80");
}

// Strings are scanned 16 bytes at a time and handed over where they lie in the file: every
// length around those pieces, the file's last bytes, and an escape at each place read whole.
TEST_CASE("JSON strings of every length around the 16-byte scan: plain and with an escape" *
          doctest::test_suite("unit")) {
    for (std::size_t length = 0; length <= 40; ++length) {
        for (const bool escaped : {false, true}) {
            std::string name(length, 'n');
            for (std::size_t i = 0; i < length; ++i) name[i] = static_cast<char>('a' + i % 26);
            std::string written = name;
            if (escaped && length > 0) {
                name[length / 2] = '"';
                written = name.substr(0, length / 2) + "\\\"" + name.substr(length / 2 + 1);
            }
            CAPTURE(length);
            CAPTURE(escaped);
            const std::string text =
                R"({"segments": [], "device_traces": [[{"action": "alloc", "addr": 4096, "size": 512, )"
                R"("stream": 0, "time_us": 1, "frames": [{"filename": "f.py", "line": 3, "name": ")" +
                written + R"("}]}]]})";
            const auto snap = snapshot::load_snapshot_bytes(text, "lengths.json");
            REQUIRE(snap.events.size() == 1);
            const auto& frame = snap.frames[snap.stacks.frames(snap.events[0].stack)[0]];
            CHECK(snap.str(frame.name) == name);
        }
    }
}

TEST_CASE("a broken JSON string is refused at RapidJSON's offset whatever the length of its plain run" *
          doctest::test_suite("unit")) {
    const std::string head = R"({"segments": [], "x": ")";  // 23 bytes
    struct Case {
        std::string text;
        std::uint64_t offset;
        const char* says;
    };
    const Case cases[] = {
        {head + "abc", 26, "missing a closing quotation mark in string (the file ends there)"},
        {head + std::string(16, 'a'), 39, "(the file ends there)"},
        {head + std::string(33, 'a'), 56, "(the file ends there)"},
        {head + "ab\x01" + "c\"}", 25, "invalid escape character in string"},
        {head + std::string(40, 'a') + "\x1f\"}", 63, "invalid escape character in string"},
        {head + "abc\\", 26, "invalid escape character in string"},
        {head + "abc\\q\"}", 26, "invalid escape character in string"},
        {head + std::string("a\0b\"}", 5), 24, "missing a closing quotation mark in string"},
        {R"({"segments": [], "device_traces": [], "x": ")" + std::string(20, 'a') + "\xff" + std::string(20, 'a') +
             "\"}",
         86, "a string is not valid UTF-8"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        try {
            snapshot::load_snapshot_bytes(c.text, "bad.json");
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.kind() == ErrorKind::input);
            CHECK(e.describe().starts_with(fmt::format("bad.json: byte {}: ", c.offset)));
            CHECK(e.describe().find(c.says) != std::string::npos);
        }
    }
}

TEST_CASE("a JSON string past --max-string is refused before it is read whole" * doctest::test_suite("unit")) {
    snapshot::LoadOptions small;
    small.limits.max_string_length = 1000;
    const std::string head = R"({"segments": [], "device_traces": [], "x": ")";
    for (const std::size_t length : {std::size_t{1001}, std::size_t{4} << 20}) {
        CAPTURE(length);
        try {
            snapshot::load_snapshot_bytes(head + std::string(length, 'a') + "\"}", "long.json", small);
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.describe().find("over the limit (--max-string)") != std::string::npos);
            REQUIRE(e.byte_offset().has_value());
            // The 4 MiB string is refused when RapidJSON's stack would grow past 1.5 times the
            // limit plus 1 MiB to hold it: none of it is copied, and the offset is its start.
            if (length > 1001) CHECK(*e.byte_offset() < head.size() + (std::size_t{2} << 20));
        }
    }
}

TEST_CASE("JSON numbers of a million digits are read without a crash" * doctest::test_suite("unit")) {
    // RapidJSON 1.1.0's full-precision path crashed on the fraction's leading zeros.
    const std::string head = R"({"segments": [], "device_traces": [], "x": )";
    const std::string digits(1000000, '0');
    for (const std::string& number : {"0." + digits + "1e5", "1." + digits, "-0." + digits})
        CHECK_NOTHROW(snapshot::load_snapshot_bytes(head + number + "}", "digits.json"));
    // Digits before the point past any double are refused, whatever the exponent says.
    for (const std::string& number : {"7" + digits, "7" + digits + "e-999999"}) {
        try {
            snapshot::load_snapshot_bytes(head + number + "}", "digits.json");
            FAIL("a number past any double accepted");
        } catch (const Error& e) {
            CHECK(e.describe().find("invalid JSON: number too big") != std::string::npos);
        }
    }
}
