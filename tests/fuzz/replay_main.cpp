// Runs a fuzz target once over every file given, and every file under each directory given,
// without libFuzzer: the corpus replay of plain ctest builds. Prints how many inputs ran;
// fails when there were none. `--skip-unless DIR` replays DIR, and exits 77 (ctest's
// Skipped) when DIR does not exist: the real captures, which not every machine has.
//
//   memsnap_replay_TARGET PATH...
//   memsnap_replay_TARGET --skip-unless DIR
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    std::vector<fs::path> files;
    for (int i = 1; i < argc; ++i) {
        if (std::string_view(argv[i]) == "--skip-unless" && i + 1 < argc) {
            if (!fs::is_directory(argv[i + 1])) {
                fmt::print("SKIPPED: {} is absent: nothing replayed from it\n", argv[i + 1]);
                return 77;
            }
            continue;  // the directory is replayed as any other argument
        }
        const fs::path arg = argv[i];
        if (fs::is_directory(arg)) {
            for (const auto& entry : fs::recursive_directory_iterator(arg))
                if (entry.is_regular_file()) files.push_back(entry.path());
        } else if (fs::is_regular_file(arg)) {
            files.push_back(arg);
        }
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    }
    fmt::print("replayed {} input(s)\n", files.size());
    return files.empty() ? 1 : 0;
}
