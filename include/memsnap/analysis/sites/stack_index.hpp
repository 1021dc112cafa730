#pragma once
// Frames and stacks of one or two captures in one table, so that they compare by id: the
// site resolver of `info` and `diff`. Frames are normalised once (a stacks="all" stack put in
// call order, see src/analysis/sites/call_order.hpp; hidden frames dropped, lines folded for
// --granularity function), classified once (Python, user code, generated,
// category rule) and named once. Across two captures a frame is the same when its path agrees
// after each capture's own prefix is removed (install prefix up to site-packages, or the
// project root: the deepest directory common to the capture's user frames); failing that,
// and only when the two project roots differ, on basename + function + line.

#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/limits.hpp>
#include <memsnap/snapshot/model.hpp>

#include <memory>
#include <string>
#include <vector>

namespace memsnap::analysis {

struct StackOptions {
    std::vector<std::string> hide;      // regexes on "file:line name": frames to drop
    std::vector<std::string> focus;     // keep only stacks with a frame matching one of these
    bool function_granularity = false;  // frames compare by file and function, not line
};

// Frames that normalisation always drops (allocator, unwinder, CPython, dispatcher), as
// PyTorch's own viewer does: matched against the file name and against the function name,
// each on its own, so that every name is looked at once.
extern const char* const default_hidden_frames;

using CanonFrameId = snapshot::Id<struct CanonFrameTag>;
using CanonStackId = snapshot::Id<struct CanonStackTag>;  // 0: nothing recorded

struct FrameText {
    std::string filename;
    std::int64_t line = 0;  // 0 with function granularity
    std::string name;
    bool python = false;
    bool user = false;  // user code by the site rule (follows from filename)
    auto operator<=>(const FrameText&) const = default;
};

class StackIndex {
  public:
    // Indexes one capture (info) or two (diff: before, after), which must outlive this.
    // Throws Error (usage) for a pattern that does not compile.
    StackIndex(std::vector<const snapshot::Snapshot*> captures, const SiteRules& rules, const StackOptions& options);
    ~StackIndex();
    StackIndex(const StackIndex&) = delete;
    StackIndex& operator=(const StackIndex&) = delete;

    // The canonical stack of a capture's stack: its frames without hidden ones. A recorded
    // stack whose frames are all hidden stays distinct from "nothing recorded".
    CanonStackId stack(std::size_t capture, snapshot::StackId stack);
    // The category of a capture's stack, from all of its frames (hidden ones too).
    Category category(std::size_t capture, snapshot::StackId stack);
    // The category of one allocation of `requested` bytes with that stack. autocast caches only
    // the low-precision copies of leaf tensors that require grad, parameters: a cast is
    // autocast_cache only when a live block of the capture asks twice its bytes (fp32 to
    // bf16/fp16) and is a parameter or was made before recording began (no stack); any other
    // cast copies a block made while recording, dies with backward and is an activation.
    Category category(std::size_t capture, snapshot::StackId stack, std::int64_t requested);

    std::span<const CanonFrameId> frames(CanonStackId stack) const;
    // The frames of `stack` as capture `capture` recorded them (its own paths and names),
    // hidden frames left out: a stack shown for one side is that side's stack, frame for frame,
    // even when frames of two checkouts were matched into one canonical frame.
    std::vector<FrameText> recorded_frames(std::size_t capture, CanonStackId stack) const;
    // The frame as text (built on each call: the index itself keeps views of the captures).
    // File and function names longer than kMaxFrameText are cut in the middle ("…"): no
    // real name is that long, and a crafted one shared by many frames must not be copied
    // whole into every report line.
    FrameText frame(CanonFrameId frame) const;
    static constexpr std::size_t kMaxFrameText = limits::frame_text_bytes;
    // Whether the frame is a module's forward (see is_forward_frame), without copying text.
    bool is_forward(CanonFrameId frame) const;
    const FrameFlags& flags(CanonFrameId frame) const;
    bool focused(CanonStackId stack) const;
    // The site of a stack (see pick_site); labelled sites for empty and C++-only stacks.
    SiteKey site(CanonStackId stack) const;
    // A number equal for two stacks exactly when their sites are: groups by site without
    // building its name.
    std::uint64_t site_token(CanonStackId stack) const;
    // The project root of a capture ("" when it has no user frame with a directory).
    const std::string& project_root(std::size_t capture) const;
    // Frames of the second capture that matched a frame of the first only once each capture's
    // own prefix was removed, or by basename: a renamed checkout or another machine.
    std::size_t renamed_frame_matches() const;
    // User frames of the second capture found under the very same path in the first.
    std::size_t same_path_user_frames() const;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// True for a user frame in a module's forward pass.
bool is_forward_frame(const FrameText& frame);
bool is_forward_frame(bool python, std::string_view filename, std::string_view name);

}  // namespace memsnap::analysis
