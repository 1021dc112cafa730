#include <memsnap/report/snapshot_diff.hpp>

#include <fmt/format.h>

#include <map>

namespace memsnap::report {

std::string render_snapshot_diff_folded(const analysis::SnapshotDiff& diff, const DiffRenderOptions&) {
    // Equal folded lines (stacks that differ only in block size) are merged; the map keeps
    // the output sorted, so it is deterministic.
    std::map<std::string, std::int64_t> lines;
    for (const auto& stack : diff.changed_stacks) {
        if (stack.delta_bytes <= 0) continue;
        std::string line;
        for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it) {
            if (!line.empty()) line += ';';
            std::string frame = fmt::format("{} ({}:{})", it->name, it->filename, it->line);
            // ';' separates frames and the last space the count: keep both out of names.
            for (char& c : frame)
                if (c == ';') c = ',';
            line += frame;
        }
        if (line.empty()) line = "<no stack>";
        lines[line] += stack.delta_bytes;
    }
    std::string out;
    for (const auto& [line, bytes] : lines) out += fmt::format("{} {}\n", line, bytes);
    return out;
}

}  // namespace memsnap::report
