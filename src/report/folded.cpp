// Folded stacks ("outer;...;inner bytes", one line per stack) of the grown bytes, for
// flamegraph.pl and speedscope. Shrinking stacks are left out: flame graphs take no negative
// widths.
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

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
    // Each line repeats its whole stack, so a crafted capture of many deep stacks could make
    // gigabytes: the biggest stacks are written up to 16 MiB in all, the rest are added up on
    // one line that says how many they are.
    constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
    std::vector<std::string> texts;
    texts.reserve(diff.frame_table.size());
    for (const auto& f : diff.frame_table) texts.push_back(folded_frame(f));
    std::vector<const analysis::RepresentativeStack*> order;
    for (const auto& stack : diff.grown_stacks)
        if (stack.delta_bytes > 0) order.push_back(&stack);
    std::stable_sort(order.begin(), order.end(),
                     [](const auto* a, const auto* b) { return a->delta_bytes > b->delta_bytes; });
    // One line per grown stack; stacks that print alike are merged, and the map keeps the
    // output sorted, so it is deterministic.
    std::map<std::string, std::int64_t> lines;
    std::size_t written = 0, left_out = 0;
    std::int64_t left_out_bytes = 0;
    for (const auto* stack : order) {
        // A stack cut short keeps its innermost frames under a root that says so.
        std::string line =
            stack->frames_omitted ? fmt::format("[{} outer frames omitted]", stack->frames_omitted) : "";
        for (auto it = stack->frames.rbegin(); it != stack->frames.rend(); ++it) {
            if (!line.empty()) line += ';';
            line += texts[*it];
        }
        if (line.empty()) line = "<no stack>";
        if (written + line.size() > kMaxBytes) {
            ++left_out;
            left_out_bytes += stack->delta_bytes;
            continue;
        }
        written += line.size();
        lines[line] += stack->delta_bytes;
    }
    if (left_out) lines[fmt::format("[{} more stacks not written]", left_out)] += left_out_bytes;
    std::string out;
    for (const auto& [line, bytes] : lines) out += fmt::format("{} {}\n", line, bytes);
    return out;
}

}  // namespace memsnap::report::detail
