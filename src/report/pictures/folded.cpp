// Folded stacks ("outer;...;inner bytes", one line per stack) for flamegraph.pl and
// speedscope: live bytes, or one side of a diff (the growth by default; flame graphs take no
// negative widths, so shrinking stacks are left out of it).
#include "pictures.hpp"
#include "profile_support.hpp"

#include <memsnap/limits.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <vector>

namespace memsnap::report::detail {

std::string folded_frame(const analysis::FrameText& f) {
    std::string frame = util::printable(f.filename.empty() ? f.name
                                        : f.line == 0      ? fmt::format("{} ({})", f.name, f.filename)
                                                           : fmt::format("{} ({}:{})", f.name, f.filename, f.line));
    for (char& c : frame)
        if (c == ';') c = ',';
    return frame;
}

std::string profile_folded(const analysis::StackProfile& profile, analysis::Side side) {
    // Each line repeats its whole stack, so a crafted capture of many deep stacks could make
    // gigabytes: the biggest stacks are written up to 16 MiB in all, the rest are added up on
    // one line that says how many they are.
    constexpr std::size_t kMaxBytes = limits::folded_bytes;
    std::vector<std::string> texts;
    texts.reserve(profile.frame_table.size());
    for (const auto& f : profile.frame_table) texts.push_back(folded_frame(f));
    auto order = analysis::sided(profile, side);
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    // Stacks that print alike are merged, and the lines are sorted (deterministic).
    std::vector<std::pair<std::string, std::int64_t>> lines;
    lines.reserve(order.size() + 1);
    std::size_t written = 0, left_out = 0;
    std::int64_t left_out_bytes = 0;
    for (const auto& [sample, value] : order) {
        // A stack cut short keeps its innermost frames under a root that says so.
        std::string line =
            sample->frames_omitted ? fmt::format("[{} outer frames omitted]", sample->frames_omitted) : "";
        for (auto it = sample->frames.rbegin(); it != sample->frames.rend(); ++it) {
            if (!line.empty()) line += ';';
            line += texts[*it];
        }
        if (line.empty()) line = "<no stack>";
        if (written + line.size() > kMaxBytes) {
            ++left_out;
            left_out_bytes += value;
            continue;
        }
        written += line.size();
        lines.emplace_back(std::move(line), value);
    }
    if (left_out) lines.emplace_back(fmt::format("[{} more stacks not written]", left_out), left_out_bytes);
    std::sort(lines.begin(), lines.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string out;
    out.reserve(written + lines.size() * 16);
    for (std::size_t i = 0; i < lines.size();) {
        std::int64_t bytes = 0;
        std::size_t j = i;
        for (; j < lines.size() && lines[j].first == lines[i].first; ++j) bytes += lines[j].second;
        fmt::format_to(std::back_inserter(out), "{} {}\n", lines[i].first, bytes);
        i = j;
    }
    return out;
}

}  // namespace memsnap::report::detail
