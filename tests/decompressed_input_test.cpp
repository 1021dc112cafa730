// Compressed captures read as they are decompressed: the bytes piece by piece, the pickle
// reader across every boundary, strings kept once their bytes are given back, and every real
// capture gzipped and zstd'ed reading to the same figures as the plain file.

#include "analysis_support.hpp"
#include "support.hpp"

#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/io/decompressed_input.hpp>
#include <memsnap/pickle/document.hpp>
#include <memsnap/snapshot/load.hpp>

#include <fmt/format.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <initializer_list>

#include <unistd.h>

using namespace memsnap;

namespace {

std::string gzip_of(std::string_view plain, int level = 6) {
    z_stream z{};
    REQUIRE(deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(plain.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(plain.data()));
    z.avail_in = static_cast<uInt>(plain.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

std::string zstd_of(std::string_view plain) {
    std::string out(ZSTD_compressBound(plain.size()), '\0');
    out.resize(ZSTD_compress(out.data(), out.size(), plain.data(), plain.size(), 3));
    return out;
}

io::DecompressOptions options_of(std::uint64_t step, std::uint64_t limit = std::uint64_t{64} << 20) {
    io::DecompressOptions options;
    options.step = step;
    options.limit = limit;
    return options;
}

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.describe();
    }
    return "no error";
}

std::string figures(const snapshot::Snapshot& snap) { return test::render_json(test::describe(snap)); }

// Writes `bytes` to a file of this process's own, removed when it goes.
struct TempFile {
    std::filesystem::path path;
    TempFile(const std::string& suffix, std::string_view bytes)
        : path(std::filesystem::temp_directory_path() / fmt::format("memsnap_stream_{}{}", ::getpid(), suffix)) {
        std::ofstream(path, std::ios::binary) << bytes;
    }
    ~TempFile() { std::filesystem::remove(path); }
};

}  // namespace

TEST_SUITE("unit") {
    TEST_CASE("decompressed input: the same bytes at any step / gzip members / zstd frames") {
        std::string plain;
        for (int i = 0; i < 20000; ++i) plain += fmt::format("{} ", i * 7919 % 10007);
        for (const auto& [wrapping, compressed] :
             {std::pair{io::Wrapping::gzip, gzip_of(plain)}, std::pair{io::Wrapping::zstd, zstd_of(plain)},
              std::pair{io::Wrapping::gzip, gzip_of(plain.substr(0, 1000)) + gzip_of(plain.substr(1000))},
              std::pair{io::Wrapping::zstd, zstd_of(plain.substr(0, 1000)) + zstd_of(plain.substr(1000))}}) {
            for (const std::uint64_t step : std::initializer_list<std::uint64_t>{1, 3, 4096, 1 << 20}) {
                CAPTURE(step);
                io::DecompressedInput input(compressed, wrapping, "x", options_of(step));
                // Asked for 10 bytes, it gives at least 10 and at least `step`, never more than asked
                // beyond the step.
                const auto first = input.more(10);
                CHECK(first.size() >= std::min<std::uint64_t>(10, plain.size()));
                CHECK(first == std::string_view(plain).substr(0, first.size()));
                CHECK(input.ended() == (first.size() == plain.size()));
                const char* at = first.data();
                CHECK(input.all() == plain);
                CHECK(input.ended());
                CHECK(input.bytes().data() == at);  // the bytes never move
                CHECK(input.more(plain.size() + 1).size() == plain.size());
            }
        }
    }

    TEST_CASE("decompressed input: cut short / damaged / a bomb at the limit / released bytes read zeros") {
        std::string plain(5000000, 'a');
        for (std::size_t i = 0; i < plain.size(); i += 7) plain[i] = static_cast<char>('a' + i % 26);
        const auto gz = gzip_of(plain);
        CHECK(message_of([&] {
                  io::DecompressedInput(gz.substr(0, gz.size() / 2), io::Wrapping::gzip, "f.gz", options_of(1 << 20))
                      .all();
              }) == fmt::format("f.gz: byte {}: gzip data is cut short", gz.size() / 2));
        const auto zst = zstd_of(plain);
        CHECK(
            message_of([&] {
                io::DecompressedInput(zst.substr(0, zst.size() / 2), io::Wrapping::zstd, "f.zst", options_of(1)).all();
            }) == fmt::format("f.zst: byte {}: zstd data is cut short", zst.size() / 2));
        auto damaged = gz;
        damaged[damaged.size() - 8] = static_cast<char>(damaged[damaged.size() - 8] ^ 0x55);  // the CRC
        const auto damaged_message =
            message_of([&] { io::DecompressedInput(damaged, io::Wrapping::gzip, "f.gz", options_of(1)).all(); });
        CAPTURE(damaged_message);
        CHECK(damaged_message.find("gzip data is damaged or cut short (incorrect data check)") != std::string::npos);
        CHECK(damaged_message.starts_with("f.gz: byte "));
        // One byte past the limit is a bomb, the limit itself is not.
        CHECK(io::DecompressedInput(gz, io::Wrapping::gzip, "f.gz", options_of(4096, plain.size())).all().size() ==
              plain.size());
        CHECK(message_of([&] {
                  io::DecompressedInput(gz, io::Wrapping::gzip, "f.gz", options_of(4096, plain.size() - 1)).all();
              }).find("refused as a likely decompression bomb") != std::string::npos);
        // Given back: the memory goes, and reading it afterwards gives zeros (which is why the
        // reader copies its strings first).
        io::DecompressedInput input(gz, io::Wrapping::gzip, "f.gz", options_of(1 << 20));
        const auto all = input.all();
        input.release_prefix(3000000);
        constexpr std::size_t released = std::size_t{2} << 20;  // in steps of 2 MiB (huge pages)
        CHECK(all.substr(0, released) == std::string(released, '\0'));
        CHECK(all.substr(released) == std::string_view(plain).substr(released));
        CHECK(input.expected_size() >= plain.size());
    }

    TEST_CASE("a document keeps the strings it was told to keep once their bytes are gone") {
        std::string input = "xxhello, worldyyfoo";
        pickle::Document doc(input);
        doc.note_input_strings();
        const auto hello = doc.new_input_string(2, 12);
        const auto foo = doc.new_input_string(16, 3);
        doc.keep_strings_before(10);  // hello starts before 10: copied whole; foo is not yet
        std::fill(input.begin(), input.begin() + 14, '\0');
        CHECK(doc.text(hello) == "hello, world");
        CHECK(doc.text(foo) == "foo");
        doc.keep_strings_before(19);
        std::fill(input.begin(), input.end(), '\0');
        CHECK(doc.text(foo) == "foo");
        CHECK(doc.text(hello) == "hello, world");
    }

    TEST_CASE("the pickle reader across every boundary of a decompressed input gives the plain file's figures") {
        // Small steps put the end of what has arrived inside every opcode and every one-piece
        // read of a list or trace entry, at every position some step reaches.
        const auto dir = test::fixtures_dir() / "snapshots";
        for (const char* name : {"gen_torch2.5_settings.pickle", "gen_torch2.5_settings_cpp.pickle",
                                 "gen_torch2.5_settings_p2.pickle", "gen_trailing_padding.pickle"}) {
            CAPTURE(name);
            const auto plain = test::read_text(dir / name);
            const auto expected = figures(snapshot::load_snapshot((dir / name).string()));
            const auto gz = gzip_of(plain);
            for (const std::uint64_t step : std::initializer_list<std::uint64_t>{1, 2, 3, 5, 7, 11, 13, 64, 1000}) {
                CAPTURE(step);
                io::DecompressedInput input(gz, io::Wrapping::gzip, (dir / name).string(), options_of(step));
                const auto snap = snapshot::load_snapshot(input);
                CHECK(figures(snap) == expected);
                CHECK(snap.source.file_bytes == plain.size());
            }
        }
    }

    TEST_CASE("errors of a streamed pickle name the file and the byte offset in the decompressed bytes") {
        const auto plain = test::read_text(test::fixtures_dir() / "snapshots" / "gen_torch2.5_settings.pickle");
        for (const std::uint64_t step : std::initializer_list<std::uint64_t>{1, 4096}) {
            CAPTURE(step);
            // Cut before STOP: the reader asks for more until the input ends, then says so.
            const auto cut_gz = gzip_of(plain.substr(0, plain.size() - 1));
            io::DecompressedInput cut(cut_gz, io::Wrapping::gzip, "cut.gz", options_of(step));
            CHECK(message_of([&] { snapshot::load_snapshot(cut); }) ==
                  "cut.gz: byte " + std::to_string(plain.size() - 1) +
                      ": truncated: the file ends before the STOP opcode");
            // A string longer than the rest of the file.
            std::string lying = plain.substr(0, 2) + "\x8d" + std::string("\xe8\x03\x00\x00\x00\x00\x00\x00", 8) + "ab";
            const auto lying_gz = gzip_of(lying);
            io::DecompressedInput long_string(lying_gz, io::Wrapping::gzip, "s.gz", options_of(step));
            CHECK(message_of([&] { snapshot::load_snapshot(long_string); }) ==
                  "s.gz: byte 2: truncated: BINUNICODE8 needs 1000 more bytes but the file ends at byte 13");
        }
    }
}  // TEST_SUITE("unit")

TEST_SUITE("real") {
    TEST_CASE("every real capture gzipped and zstd'ed reads to the plain file's figures") {
        if (!test::have_real()) MEMSNAP_SKIP(test::real_missing());
        const auto files = test::files_in(test::real_dir() / "snapshots", ".pickle");
        REQUIRE(files.size() > 10);
        bool released = false;
        for (const auto& f : files) {
            CAPTURE(f.string());
            const auto plain = test::read_text(f);
            const auto expected = figures(snapshot::load_snapshot(f.string()));
            // Through the capture layer, as memsnap reads a file; and with small steps, so that
            // strings are kept across many boundaries.
            for (const auto& wrapped : {std::pair{std::string(".pickle.gz"), gzip_of(plain)},
                                        std::pair{std::string(".pickle.zst"), zstd_of(plain)}}) {
                // Named, not bound: CAPTURE's lambda cannot take a structured binding (clang 14).
                const auto& suffix = wrapped.first;
                const auto& compressed = wrapped.second;
                CAPTURE(suffix);
                const TempFile file(suffix, compressed);
                const auto capture = capture::load_capture(file.path.string(), {});
                REQUIRE(capture.is_snapshot());
                // The same figures but for the path, which is the temporary file's.
                auto figures_read = figures(capture.snapshot());
                for (const auto& [from, to] : {std::pair{file.path.string(), f.string()},
                                               std::pair{file.path.filename().string(), f.filename().string()}})
                    for (auto at = figures_read.find(from); at != std::string::npos; at = figures_read.find(from, at))
                        figures_read.replace(at, from.size(), to);
                CHECK(figures_read == expected);
                const auto wrapping = suffix == ".pickle.gz" ? io::Wrapping::gzip : io::Wrapping::zstd;
                io::DecompressedInput input(compressed, wrapping, f.string(), options_of(4093));
                CHECK(figures(snapshot::load_snapshot(input)) == expected);
            }
            released = released || plain.size() > (std::size_t{2} << 20);
        }
        CHECK(released);  // some file is long enough for the reader to give bytes back
    }
}  // TEST_SUITE("real")

TEST_SUITE("unit") {
    TEST_CASE("inside a compressed file: a page / JSON / a table are read whole / the same wrapping twice is refused") {
        const auto dir = test::fixtures_dir() / "snapshots";
        const auto expected = figures(snapshot::load_snapshot((dir / "gen_torch2.5_settings.pickle").string()));
        // The figures of `bytes` in a file of that suffix, named as `original`.
        const auto read_figures = [&](const std::string& suffix, const std::string& bytes,
                                      const std::string& original = "gen_torch2.5_settings.pickle") {
            const TempFile file(suffix, bytes);
            auto text = figures(capture::load_capture(file.path.string(), {}).snapshot());
            for (const auto& [from, to] : {std::pair{file.path.string(), (dir / original).string()},
                                           std::pair{file.path.filename().string(), original}})
                for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at))
                    text.replace(at, from.size(), to);
            return text;
        };
        const auto page = test::read_text(dir / "gen_torch2.5_settings_viz.html");
        CHECK(read_figures(".html.gz", gzip_of(page)) == expected);
        CHECK(read_figures(".html.zst", zstd_of(page)) == expected);
        const auto json = test::read_text(dir / "gen_torch2.5_settings.json");
        const auto json_figures = figures(snapshot::load_snapshot((dir / "gen_torch2.5_settings.json").string()));
        CHECK(read_figures(".json.gz", gzip_of(json), "gen_torch2.5_settings.json") == json_figures);
        // A gzip inside a gzip, a zstd inside a zstd: refused before the rest is decompressed.
        const auto plain = test::read_text(dir / "gen_torch2.5_settings.pickle");
        for (const auto& [suffix, twice, what] :
             {std::tuple{".gz", gzip_of(gzip_of(plain)), "a gzip inside a gzip: refused"},
              std::tuple{".zst", zstd_of(zstd_of(plain)), "a zstd inside a zstd: refused"}}) {
            const TempFile file(suffix, twice);
            CHECK(message_of([&] { capture::load_capture(file.path.string(), {}); }) ==
                  file.path.string() + ": " + what);
        }
        // A memory_summary table inside: read whole, as text.
        const auto table =
            test::read_text(test::fixtures_dir() / "summaries" /
                            test::files_in(test::fixtures_dir() / "summaries", ".txt").front().filename());
        const TempFile gz_table(".txt.gz", gzip_of(table));
        CHECK(!capture::load_capture(gz_table.path.string(), {}).is_snapshot());
    }
}  // TEST_SUITE("unit")
