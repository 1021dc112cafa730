#pragma once
// Stacks as reports show them: frames kept once in a frame table, and each stack a list of
// positions in it.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/limits.hpp>

#include <cstdint>
#include <map>
#include <vector>

namespace memsnap::analysis {

// A stack as a report shows it. Its frames are positions in SnapshotDiff::frame_table, where
// each distinct frame's text is kept once however many stacks hold it.
struct RepresentativeStack {
    std::int64_t size = 0;  // block size of this (stack, size) group
    std::int64_t delta_blocks = 0;
    std::int64_t delta_bytes = 0;
    Category category = Category::unknown;
    std::vector<std::uint32_t> frames;  // normalised, innermost first, at most kMaxStackFrames
    std::size_t frames_omitted = 0;     // outermost frames past kMaxStackFrames
};
// What a site's representative stacks leave out: its other groups, added up.
struct StacksNotShown {
    std::int64_t groups = 0;
    std::int64_t delta_blocks = 0;
    std::int64_t delta_bytes = 0;
    void add(std::int64_t blocks, std::int64_t bytes) {
        ++groups;
        delta_blocks += blocks;
        delta_bytes += bytes;
    }
};
// Frames kept of one stack in a report: real stacks hold tens to a hundred or so.
inline constexpr std::size_t kMaxStackFrames = limits::stack_frames;

// One stack's bytes, for pictures (stack_profile.hpp): frames as in RepresentativeStack.
struct ProfileSample {
    std::vector<std::uint32_t> frames;  // innermost first, positions in a frame table
    std::size_t frames_omitted = 0;     // outer frames past kMaxStackFrames
    Category category = Category::unknown;
    std::int64_t bytes = 0, count = 0;            // live, or the after side of a diff
    std::int64_t base_bytes = 0, base_count = 0;  // the before side of a diff
    std::int64_t delta_bytes() const { return bytes - base_bytes; }
};

// Frames as positions in a frame table, each distinct frame added once.
class FrameTableBuilder {
  public:
    FrameTableBuilder(const StackIndex& index, std::vector<FrameText>& table) : index_(index), table_(table) {}
    // The innermost kMaxStackFrames frames of `stack` into `out`.
    void add_frames(CanonStackId stack, RepresentativeStack& out);
    // The same, as capture `capture` recorded them (StackIndex::recorded_frames).
    void add_recorded_frames(std::size_t capture, CanonStackId stack, RepresentativeStack& out);

  private:
    const StackIndex& index_;
    std::vector<FrameText>& table_;
    std::map<std::uint32_t, std::uint32_t> position_;  // CanonFrameId -> table_
    std::map<FrameText, std::uint32_t> by_text_;       // recorded frames -> table_
};

}  // namespace memsnap::analysis
