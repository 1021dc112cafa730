// Reading inputs: a mapped file truncated under the reader, pipes and devices bounded by
// --max-input, inputs refused by their first bytes.

#include "support.hpp"

#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/mapped_file.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <zstd.h>

#include <fstream>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

namespace {

// A directory with two captures behind symbolic links (as git-annex and DVC keep them), a
// regular capture, and entries that cannot be read: a dangling link, a link loop, a FIFO.
std::filesystem::path hazard_dir(const std::string& name) {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / fmt::format("memsnap_{}_{}", name, ::getpid());
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto pairs = test::fixtures_dir() / "pairs";
    fs::create_symlink(pairs / "leak" / "run_step100.pickle", dir / "rank0_step100.pickle");
    fs::create_symlink(pairs / "leak" / "run_step500.pickle", dir / "rank1_step500.pickle");
    fs::copy_file(pairs / "leak" / "run_step100.pickle", dir / "rank2_step900.pickle");
    fs::create_symlink(dir / "nowhere.pickle", dir / "dangling.pickle");
    fs::create_symlink(dir / "loop_b", dir / "loop_a");
    fs::create_symlink(dir / "loop_a", dir / "loop_b");
    REQUIRE(::mkfifo((dir / "fifo.pickle").c_str(), 0600) == 0);
    return dir;
}

std::size_t count_of(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++n;
    return n;
}

}  // namespace

TEST_CASE("directories: dangling links / link loops / FIFOs are skipped with a warning each / no hang" *
          doctest::test_suite("cli")) {
    const auto dir = hazard_dir("hazards");
    // `timeout`: a FIFO opened for reading would block for ever; a regression fails, not hangs.
    for (const char* command : {"info --format jsonl", "trend", "ranks"}) {
        CAPTURE(command);
        const auto r = test::run_memsnap(std::string(command) + " " + test::quote(dir), "timeout 20");
        REQUIRE(r.exit_code == 0);
        CHECK(count_of(r.err, "warning: skipped") == 4);
        CHECK(r.err.find("dangling.pickle: a dangling symbolic link") != std::string::npos);
        CHECK(r.err.find("loop_a: a symbolic link loop") != std::string::npos);
        CHECK(r.err.find("loop_b: a symbolic link loop") != std::string::npos);
        CHECK(r.err.find("fifo.pickle: a FIFO, not a regular file") != std::string::npos);
        for (const char* file : {"rank0_step100", "rank1_step500", "rank2_step900"})
            CHECK(r.out.find(file) != std::string::npos);
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a FIFO named on the command line with no writer: exit 2 at once / one found in a directory is never opened" *
          doctest::test_suite("cli")) {
    const auto dir = hazard_dir("fifo");
    const auto fifo = dir / "fifo.pickle";
    for (const char* command : {"info", "info --format jsonl", "trend", "ranks"}) {
        CAPTURE(command);
        const auto r = test::run_memsnap(std::string(command) + " " + test::quote(fifo) + " " +
                                             test::quote(dir / "rank0_step100.pickle") + " " +
                                             test::quote(dir / "rank1_step500.pickle"),
                                         "timeout 20");
        CHECK(r.exit_code == 2);
        CHECK(r.err == "memsnap: error: " + fifo.string() + ": a FIFO that nothing was written to\n");
    }
    // Swapped in after the listing, a FIFO is refused as it is opened, before it can block.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::alarm(20);
        try {
            capture::load_capture(capture::InputName{fifo.string(), true}, {});
        } catch (const Error& e) {
            ::_exit(e.kind() == ErrorKind::input && std::string(e.what()) == "a FIFO, not a regular file" ? 0 : 1);
        }
        ::_exit(1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::filesystem::remove_all(dir);
}

namespace {

// A zstd skippable frame written by hand: magic 0x184D2A5N and the payload's size, both
// little-endian, then the payload.
std::string skippable_frame(unsigned variant, const std::string& payload, std::uint32_t declared) {
    std::string out;
    for (const std::uint32_t word : {0x184D2A50u + variant, declared})
        for (int i = 0; i < 4; ++i) out += static_cast<char>((word >> (8 * i)) & 0xffu);
    return out + payload;
}

std::string zstd_of(const std::string& plain) {
    std::string out(ZSTD_compressBound(plain.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3));
    return out;
}

}  // namespace

TEST_CASE(
    "zstd: skippable frames before and after the compressed frame (pzstd / seekable) / only skippable frames / "
    "a frame past the end" *
    doctest::test_suite("cli")) {
    const auto source = test::fixtures_dir() / "pairs" / "leak" / "run_step100.pickle";
    const auto plain = test::run_memsnap("info --format json --top 0 " + test::quote(source));
    REQUIRE(plain.exit_code == 0);
    const auto compressed = zstd_of(test::read_text(source));
    const auto tmp =
        std::filesystem::temp_directory_path() / fmt::format("memsnap_skippable_{}.pickle.zst", ::getpid());
    const auto info = [&](const std::string& bytes) {
        std::ofstream(tmp, std::ios::binary) << bytes;
        return test::run_memsnap("info --format json --top 0 " + test::quote(tmp));
    };
    // The same report as the plain pickle's, but for the file's name.
    const auto without_path = [](const std::string& json) {
        auto j = nlohmann::json::parse(json);
        j.erase("file");
        j.erase("path");
        return j;
    };
    const auto expected = plain.out;
    // pzstd: a 12-byte skippable frame (the compressed size) before each frame.
    const auto pzstd = skippable_frame(0, std::string(4, '\x2a'), 4) + compressed;
    auto r = info(pzstd);
    REQUIRE(r.exit_code == 0);
    CHECK(without_path(r.out) == without_path(expected));
    // Several skippable frames, of other magic values, one empty; a seek table at the end.
    r = info(skippable_frame(15, "", 0) + skippable_frame(7, std::string(1000, 'x'), 1000) + compressed +
             skippable_frame(14, std::string(9, 's'), 9));
    REQUIRE(r.exit_code == 0);
    CHECK(without_path(r.out) == without_path(expected));
    // Refused with the byte offset: only skippable frames; a size past the end; nothing after.
    const auto path = tmp.string();
    r = info(skippable_frame(0, "abcd", 4) + skippable_frame(1, "", 0));
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "memsnap: error: " + path + ": byte 20: zstd skippable frames only: no compressed frame follows them\n");
    r = info(skippable_frame(0, "abcd", 4) + skippable_frame(3, "short", 1000));
    CHECK(r.exit_code == 2);
    CHECK(r.err ==
          "memsnap: error: " + path +
              ": byte 12: a zstd skippable frame of 1000 bytes runs past the end of the file (5 bytes left)\n");
    r = info(skippable_frame(0, "abcd", 4) + "not zstd");
    CHECK(r.exit_code == 2);
    CHECK(r.err == "memsnap: error: " + path + ": byte 12: no zstd frame after the skippable frames\n");
    r = info(skippable_frame(0, "abcd", 4).substr(0, 6));
    CHECK(r.exit_code == 2);
    CHECK(r.err == "memsnap: error: " + path + ": byte 0: a zstd skippable frame's header is cut short\n");
    std::filesystem::remove(tmp);
}
