#include "main_script.hpp"

#include <algorithm>
#include <vector>

namespace memsnap::analysis::detail {

std::optional<std::string> main_script(const snapshot::Snapshot& snap) {
    // Names are compared once per distinct frame, not once per stack that holds it.
    std::vector<bool> is_module(snap.frames.size());
    for (std::uint32_t f = 0; f < snap.frames.size(); ++f)
        is_module[f] = snap.str(snap.frames[snapshot::FrameId(f)].name) == "<module>";
    std::optional<snapshot::StringId> found;
    for (std::uint32_t s = 0; s < snap.stacks.size(); ++s) {
        const auto frames = snap.stacks.frames(snapshot::StackId(s));
        // Innermost first: the last `<module>` frame is the outermost.
        const auto outermost =
            std::find_if(frames.rbegin(), frames.rend(), [&](snapshot::FrameId f) { return is_module[f.value]; });
        if (outermost == frames.rend()) continue;
        const auto file = snap.frames[*outermost].filename;
        if (found && *found != file && snap.str(*found) != snap.str(file)) return std::nullopt;
        found = file;
    }
    if (!found) return std::nullopt;
    return std::string(snap.str(*found));
}

}  // namespace memsnap::analysis::detail
