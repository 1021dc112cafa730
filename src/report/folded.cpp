// Folded stacks ("outer;...;inner bytes", one line per stack) of the grown bytes, for
// flamegraph.pl and speedscope. Shrinking stacks are left out: flame graphs take no negative
// widths.
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <map>

namespace memsnap::report::detail {

namespace {

// A frame as one folded element: ';' separates frames and the last space the count, so
// neither may appear inside; control characters are escaped.
std::string folded_frame(const analysis::FrameText& f) {
    std::string frame = util::printable(f.line == 0 ? fmt::format("{} ({})", f.name, f.filename)
                                                    : fmt::format("{} ({}:{})", f.name, f.filename, f.line));
    for (char& c : frame)
        if (c == ';') c = ',';
    return frame;
}

}  // namespace

std::string snapshot_diff_folded(const analysis::SnapshotDiff& diff) {
    // Equal folded lines (stacks that differ only in block size) are merged; the map keeps
    // the output sorted, so it is deterministic.
    std::map<std::string, std::int64_t> lines;
    for (const auto& stack : diff.changed_stacks) {
        if (stack.delta_bytes <= 0) continue;
        std::string line;
        for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it) {
            if (!line.empty()) line += ';';
            line += folded_frame(*it);
        }
        if (line.empty()) line = "<no stack>";
        lines[line] += stack.delta_bytes;
    }
    std::string out;
    for (const auto& [line, bytes] : lines) out += fmt::format("{} {}\n", line, bytes);
    return out;
}

}  // namespace memsnap::report::detail
