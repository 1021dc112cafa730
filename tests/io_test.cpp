// Reading inputs: a mapped file truncated under the reader, pipes and devices bounded by
// --max-input, inputs refused by their first bytes.

#include "support.hpp"

#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>

#include <fstream>

using namespace memsnap;

TEST_CASE("a mapped file truncated while it is read reads zeros and says it changed" * doctest::test_suite("unit")) {
    const auto path = std::filesystem::temp_directory_path() / "memsnap_truncated_under_reader.txt";
    std::ofstream(path, std::ios::binary) << std::string(3 * 4096, 'x');
    const io::MappedFile file(path.string());
    CHECK_FALSE(file.changed());
    CHECK(file.bytes().front() == 'x');
    std::filesystem::resize_file(path, 0);
    std::size_t zeros = 0;
    for (const char c : file.bytes()) zeros += c == '\0';  // each lost page faults once
    CHECK(zeros == file.bytes().size());
    CHECK(file.changed());
    std::filesystem::remove(path);
}

TEST_CASE("pipes and devices: refused by their first bytes / bounded by --max-input" * doctest::test_suite("cli")) {
    const auto zero = test::run_memsnap("info /dev/zero");
    CHECK(zero.exit_code == 2);
    CHECK(zero.err ==
          "memsnap: error: /dev/zero: byte 0: not a pickle of protocol 2 to 5 (starts with byte 0x00), nor "
          "text\n");
    const auto summary = test::fixtures_dir() / "summaries" / "layout_torch2.0.txt";
    CHECK(test::run_memsnap("info -", "", summary.string()).exit_code == 0);
    const auto small = test::run_memsnap("--max-input 1KiB info -", "", summary.string());
    CHECK(small.exit_code == 2);
    CHECK(small.err.find("more than 1024 bytes (--max-input)") != std::string::npos);
    CHECK(test::run_memsnap("--max-input 0 info -", "", summary.string()).exit_code == 1);
}
