#pragma once
// Shared helpers for the test suite: fixture paths, golden files, running the CLI.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace memsnap::test {

inline std::filesystem::path source_dir() { return MEMSNAP_SOURCE_DIR; }
inline std::filesystem::path fixtures_dir() { return source_dir() / "fixtures"; }
inline std::filesystem::path golden_dir() { return source_dir() / "tests" / "golden"; }
// The real captures live beside the repository and are read in place (-DMEMSNAP_REAL_DIR=DIR
// at configure time reads them from elsewhere).
inline std::filesystem::path real_dir() { return MEMSNAP_REAL_DIR; }
inline bool have_real() { return std::filesystem::is_directory(real_dir()); }
// Why a test of the real captures is skipped.
inline std::string real_missing() { return real_dir().string() + " is absent: the real captures are not read"; }

// Skipping. A test whose input or tool is missing says so with MEMSNAP_SKIP(why), before any
// check, and returns: it is counted as skipped, never as passed. The binary (tests/main.cpp)
// exits skip_exit_code when every case it ran skipped, as each ctest entry runs one case, and
// ctest, told so by SKIP_RETURN_CODE, reports the entry as Skipped.
inline constexpr int skip_exit_code = 77;

struct Skips {
    std::string pending;            // why the running test case skipped, "" while it has not
    std::vector<std::string> done;  // "name: why" of each case that skipped
};

inline Skips& skips() {
    static Skips s;
    return s;
}

inline void skip(const std::string& why) {
    std::cout << "SKIPPED: " << why << std::endl;
    skips().pending = why.empty() ? "skipped" : why;
}

// Skips the running test case (see above): use it in the test case's own body.
#define MEMSNAP_SKIP(why)           \
    do {                            \
        ::memsnap::test::skip(why); \
        return;                     \
    } while (false)

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

// Files in `dir` whose names end with `suffix`, sorted for a stable test order.
inline std::vector<std::filesystem::path> files_in(const std::filesystem::path& dir, const std::string& suffix = "") {
    std::vector<std::filesystem::path> out;
    if (!std::filesystem::is_directory(dir)) return out;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (entry.is_regular_file() && name.size() >= suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
            out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Compares `actual` with tests/golden/<name>. With MEMSNAP_UPDATE_GOLDEN=1 in the
// environment the golden file is rewritten instead, so updates arrive as a reviewable diff.
// Markdown that renders as written: a table starts after a blank line (after a list item it
// would be more of the item's text, after </details> more of the HTML), and no <details>
// block is empty.
inline void check_markdown_blocks(const std::string& markdown) {
    std::istringstream in(markdown);
    std::string line, previous;
    bool open_details = false, details_text = false;
    while (std::getline(in, line)) {
        if (line.starts_with("|") && !previous.empty() && !previous.starts_with("|")) {
            CAPTURE(previous);
            CAPTURE(line);
            FAIL_CHECK("a table right after a line that is not blank");
        }
        if (line.starts_with("<details>")) {
            open_details = true;
            details_text = false;
        } else if (line == "</details>") {
            CHECK(details_text);
            open_details = false;
        } else if (open_details && !line.empty()) {
            details_text = true;
        }
        previous = line;
    }
}

inline void check_golden(const std::string& name, const std::string& actual) {
    const auto path = golden_dir() / name;
    if (const char* update = std::getenv("MEMSNAP_UPDATE_GOLDEN"); update && *update == '1') {
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << actual;
        return;
    }
    REQUIRE_MESSAGE(std::filesystem::exists(path),
                    "missing golden file " << path << " (run with MEMSNAP_UPDATE_GOLDEN=1)");
    const std::string expected = read_text(path);
    if (expected != actual) {
        // Print the first differing line to make the mismatch readable in ctest output.
        std::istringstream e(expected), a(actual);
        std::string el, al;
        int line = 1;
        while (true) {
            const bool he = static_cast<bool>(std::getline(e, el));
            const bool ha = static_cast<bool>(std::getline(a, al));
            if (!he && !ha) break;
            if (!he || !ha || el != al) {
                FAIL_CHECK("golden " << name << " differs at line " << line << "\n  expected: " << (he ? el : "<end>")
                                     << "\n  actual:   " << (ha ? al : "<end>"));
                break;
            }
            ++line;
        }
        CHECK(expected == actual);
    }
}

struct CommandResult {
    int exit_code = -1;
    std::string out;  // stdout
    std::string err;  // stderr
};

// Runs the built memsnap binary with `args` (already shell-quoted), capturing both streams.
inline CommandResult run_memsnap(const std::string& args, const std::string& env = "",
                                 const std::string& stdin_path = "/dev/null") {
    const auto tmp = std::filesystem::temp_directory_path();
    static int counter = 0;
    const auto out_path =
        tmp / ("memsnap_test_out_" + std::to_string(::getpid()) + "_" + std::to_string(counter) + ".txt");
    const auto err_path =
        tmp / ("memsnap_test_err_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".txt");
    const std::string cmd = env + " " + std::string(MEMSNAP_BINARY) + " " + args + " >" + out_path.string() + " 2>" +
                            err_path.string() + " <'" + stdin_path + "'";
    const int status = std::system(cmd.c_str());
    CommandResult result;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = read_text(out_path);
    result.err = read_text(err_path);
    std::filesystem::remove(out_path);
    std::filesystem::remove(err_path);
    return result;
}

// What a shell command writes to standard output (its status is not looked at).
inline std::string shell_output(const std::string& command) {
    std::string out;
    if (FILE* pipe = ::popen(command.c_str(), "r")) {
        char buffer[65536];
        for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
        ::pclose(pipe);
    }
    return out;
}

inline std::string quote(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

// Whether `program` is on the PATH.
inline bool have_program(const std::string& program) {
    return std::system(("command -v '" + program + "' >/dev/null 2>&1").c_str()) == 0;
}

}  // namespace memsnap::test
