#pragma once
// Internal: what the picture writers share. A stack profile as a calling-context tree
// (outermost frame at the root), the frame names of the folded format, and XML escaping.

#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/limits.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::report::detail {

// "name (file:line)", with ';' replaced: one element of a folded stack.
std::string folded_frame(const analysis::FrameText& f);

// The picture's title: what the profile shows, in words.
std::string profile_title(const analysis::StackProfile& profile);

// What a picture of `profile` on `side` measures: its own measure, or a diff's side.
std::string side_measure(const analysis::StackProfile& profile, analysis::Side side);

// Text safe inside XML and HTML, control characters escaped as memsnap prints them.
std::string xml_text(std::string_view raw);

// What a picture shows of a profile: the stacks as the text shows them. A stack's interpreter
// and dispatcher frames (every frame not from Python: Py_BytesMain, _PyRun_*, slot_tp_call,
// wrap_kernel_functor_unboxed_...) are dropped unless `cpp_frames`, when it has a Python frame
// to show; stacks that become equal merge. Blocks with no stack are one labelled frame,
// "<no stack>", rather than a blank.
analysis::StackProfile shown_stacks(const analysis::StackProfile& profile, bool cpp_frames);

struct TreeNode {
    std::int64_t frame = -1;  // position in the frame table; -1 for the root, -2 for "[N outer frames omitted]"
    std::int64_t value = 0;   // inclusive, of the side shown
    std::int64_t before = 0, after = 0;  // inclusive, both sides (differential profiles)
    std::int64_t self = 0;
    analysis::Category category = analysis::Category::unknown;  // of the biggest sample through it
    std::int64_t category_value = 0;
    std::vector<std::size_t> children;  // by value, biggest first
};

// The profile's samples of one side as a tree; node 0 is the root. At most kMaxTreeNodes
// nodes: far more than a picture can show, while a crafted capture cannot make it huge.
inline constexpr std::size_t kMaxTreeNodes = limits::picture_tree_nodes;
// The profile's samples of one side as a tree; node 0 is the root.
std::vector<TreeNode> call_tree(const analysis::StackProfile& profile, analysis::Side side);

}  // namespace memsnap::report::detail
