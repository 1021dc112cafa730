#include <memsnap/analysis/sites/stacks.hpp>

#include <algorithm>

namespace memsnap::analysis {

void FrameTableBuilder::add_frames(CanonStackId stack, RepresentativeStack& out) {
    const auto frames = index_.frames(stack);
    const std::size_t kept = std::min(frames.size(), kMaxStackFrames);
    out.frames.reserve(kept);
    for (std::size_t i = 0; i < kept; ++i) {
        const auto [at, added] = position_.try_emplace(frames[i].value, static_cast<std::uint32_t>(table_.size()));
        if (added) table_.push_back(index_.frame(frames[i]));
        out.frames.push_back(at->second);
    }
    out.frames_omitted = frames.size() - kept;
}

void FrameTableBuilder::add_recorded_frames(std::size_t capture, CanonStackId stack, RepresentativeStack& out) {
    const auto frames = index_.recorded_frames(capture, stack);
    const std::size_t kept = std::min(frames.size(), kMaxStackFrames);
    out.frames.reserve(kept);
    for (std::size_t i = 0; i < kept; ++i) {
        const auto [at, added] = by_text_.try_emplace(frames[i], static_cast<std::uint32_t>(table_.size()));
        if (added) table_.push_back(frames[i]);
        out.frames.push_back(at->second);
    }
    out.frames_omitted = frames.size() - kept;
}

}  // namespace memsnap::analysis
