#include "call_order.hpp"

#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/id_index.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

namespace memsnap::analysis {

// Function and file fragments of PyTorch's viewer filter (_memory_viz.py), plus the caching
// allocator itself: none of these say anything about who allocated.
const char* const default_hidden_frames =
    R"(unwind::unwind|CapturedTraceback::gather|gather_with_cpp|__libc_start_main|(^| )_start$|)"
    R"(PyEval_|PyObject_|PyFunction_|core/boxing|/Register|/Redispatch|pythonrun\.c|)"
    R"(Modules/main\.c|Objects/call\.c|Objects/methodobject\.c|pycore_ceval\.h|ceval\.c|)"
    R"(cpython/abstract\.h|CUDACachingAllocator)";

namespace {

using snapshot::FrameId;
using snapshot::Snapshot;
using snapshot::StackId;

// Compiled once per process (RE2 matches from many threads at once).
const util::Pattern& default_hidden_pattern() {
    static const util::Pattern pattern{default_hidden_frames, "default hidden frames"};
    return pattern;
}

constexpr std::uint32_t kUnmapped = std::numeric_limits<std::uint32_t>::max();
const CanonStackId kAllHidden{1};  // recorded, every frame dropped

std::string_view directory_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
}

// The longest common prefix of two directories ("/a/b/"), cut at a '/'.
std::string common_directory(const std::string& a, std::string_view b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    const auto slash = a.rfind('/', n == 0 ? 0 : n - 1);
    return slash == std::string::npos ? std::string() : a.substr(0, slash + 1);
}

// A path without the prefix that differs between installs and checkouts.
std::string stripped_path(std::string_view path, const std::string& root) {
    for (const char* marker : {"site-packages/", "dist-packages/"})
        if (const auto at = path.rfind(marker); at != std::string::npos)
            return fmt::format("lib:{}", path.substr(at + std::string_view(marker).size()));
    if (const auto at = path.find("/lib/python"); at != std::string::npos)
        if (const auto next = path.find('/', at + 11); next != std::string::npos)
            return fmt::format("std:{}", path.substr(next + 1));
    if (const auto at = path.find("/Lib/"); at != std::string::npos) return fmt::format("std:{}", path.substr(at + 5));
    if (const auto at = path.find("torchinductor_"); at != std::string::npos)
        if (const auto next = path.find('/', at); next != std::string::npos)
            return fmt::format("gen:{}", path.substr(next + 1));
    if (!root.empty() && path.starts_with(root)) return fmt::format("proj:{}", path.substr(root.size()));
    return std::string(path);
}

std::string_view basename_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Texts interned once across the captures (normalised paths, function names, stripped
// paths, basenames), so that frames compare and hash by number: a long file name shared by
// many frames is hashed once, not once per frame.
class TextIds {
  public:
    std::uint32_t id(std::string_view text) {
        const std::uint64_t h = util::hash_text(text);
        if (const auto found = index_.find(h, [&](std::uint32_t i) { return texts_[i] == text; })) return *found;
        texts_.push_back(text);
        index_.insert(h, static_cast<std::uint32_t>(texts_.size() - 1));
        return static_cast<std::uint32_t>(texts_.size() - 1);
    }
    // For texts that live only as long as the call: kept in the index's own arena.
    std::uint32_t id_of_temporary(std::string_view text) {
        const std::uint64_t h = util::hash_text(text);
        if (const auto found = index_.find(h, [&](std::uint32_t i) { return texts_[i] == text; })) return *found;
        texts_.push_back(arena_.store(text));
        index_.insert(h, static_cast<std::uint32_t>(texts_.size() - 1));
        return static_cast<std::uint32_t>(texts_.size() - 1);
    }
    std::string_view text(std::uint32_t id) const { return texts_[id]; }

  private:
    std::vector<std::string_view> texts_;
    util::IdIndex index_;
    util::TextArena arena_;
};

constexpr std::uint32_t kNoFacts = 0;  // facts_of slots: index + 1

}  // namespace

struct StackIndex::Impl {
    // Views into the captures' string tables (which outlive the index) or into `texts`.
    struct Entry {
        std::string_view filename, name;
        std::uint32_t path = 0, name_id = 0;  // TextIds of the normalised path and the function
        std::int64_t line = 0;
        FrameFlags flags;
        bool hidden = false, focused = false;
        bool evaluator = false;   // runs Python frames (detail::evaluates_python)
        FrameRole role;           // for the category walk
        std::uint8_t origin = 0;  // the capture that brought the frame in
    };
    // What one file name or one function name says, worked out once per capture and string.
    struct FileFacts {
        std::uint32_t path = 0;  // TextIds of the normalised path
        FrameFlags flags;
        bool hidden = false;
        std::uint32_t rules = 0;  // CategoryClassifier::path_rules
        PathRole role;
        std::uint32_t stripped = 0, basename = 0;  // TextIds, when the project roots differ
    };
    struct NameFacts {
        std::uint32_t name = 0;  // TextIds
        bool hidden = false;
        std::uint32_t rules = 0;  // CategoryClassifier::function_rules
    };
    struct Capture {
        const Snapshot* snap = nullptr;
        std::string root;
        std::vector<std::uint32_t> frame_map;                   // FrameId -> CanonFrameId, kUnmapped
        std::vector<std::uint32_t> stack_map;                   // StackId -> CanonStackId, kUnmapped
        std::vector<std::uint32_t> first_raw;                   // CanonStackId -> the first StackId + 1 of it
        std::vector<std::uint8_t> category_map;                 // StackId -> rule + 1, 0 unknown yet
        std::optional<std::vector<std::int64_t>> weight_sizes;  // requested, sorted; on first need
        std::optional<std::vector<std::int64_t>> leaf_sizes;    // the same
        std::vector<std::uint32_t> file_facts, name_facts;      // StringId -> index + 1 into files/names
        std::vector<FileFacts> files;
        std::vector<NameFacts> names;
    };
    // Canonical stacks, interned: frames in one flat vector, found by a seeded hash.
    struct Stack {
        std::uint32_t first = 0, count = 0;
        std::int32_t site = -1;  // position of the site frame; -1: no Python frame
        bool compiled = false;
        bool focused = true;
    };
    using IdKey = std::tuple<std::uint32_t, std::int64_t, std::uint32_t>;  // (text id, line, name id)

    FrameClassifier classifier;
    CategoryClassifier categories;
    const util::Pattern& default_hidden = default_hidden_pattern();
    std::optional<util::Pattern> hide, focus;  // the user's, on "file:line name"
    bool function_granularity = false;
    std::vector<Capture> captures;
    bool roots_differ = false;
    std::vector<Entry> frames;
    TextIds texts;
    util::IdIndex by_path;  // frames by (path, line, name) ids
    // Only when the captures' project roots differ (a renamed checkout):
    std::map<IdKey, std::uint32_t> by_stripped;
    std::map<IdKey, std::vector<std::uint32_t>> by_basename;
    std::vector<Stack> stacks;
    std::vector<CanonFrameId> stack_frames;
    util::IdIndex stack_index;
    std::vector<FrameFlags> scratch_flags;
    std::size_t renamed = 0, same_path_user = 0;

    Impl(const SiteRules& rules, const StackOptions& options) : classifier(rules) {
        hide = util::Pattern::any_of(options.hide, "--hide");
        focus = util::Pattern::any_of(options.focus, "--focus");
        function_granularity = options.function_granularity;
        stacks.push_back({});  // 0: nothing recorded
        stacks.push_back({});  // 1: all frames hidden
    }

    std::string root_of(Capture& c) {
        for (std::size_t f = 0; f < c.snap->frames.size(); ++f)
            file_facts(c, c.snap->frames[FrameId(static_cast<std::uint32_t>(f))].filename);
        std::optional<std::string> root;
        for (const auto& facts : c.files) {  // each file name once
            if (!facts.flags.user) continue;
            const auto dir = directory_of(texts.text(facts.path));
            if (dir.empty()) continue;
            root = root ? common_directory(*root, dir) : std::string(dir);
        }
        return root && *root != "/" ? *root : std::string();
    }

    const FileFacts& file_facts(Capture& c, snapshot::StringId id) {
        auto& slot = c.file_facts[id.value];
        if (slot != kNoFacts) return c.files[slot - 1];
        const auto filename = c.snap->str(id);
        FileFacts f;
        f.path = filename.find('\\') == std::string_view::npos ? texts.id(filename)
                                                               : texts.id_of_temporary(normalized_path(filename));
        const auto path = texts.text(f.path);
        f.flags = classifier.classify(filename);
        f.hidden = default_hidden.search(filename);
        const auto facts = categories.path_facts(path);
        f.rules = facts.rules;
        f.role = facts.role;
        c.files.push_back(f);
        slot = static_cast<std::uint32_t>(c.files.size());
        return c.files.back();
    }

    const NameFacts& name_facts(Capture& c, snapshot::StringId id) {
        auto& slot = c.name_facts[id.value];
        if (slot != kNoFacts) return c.names[slot - 1];
        const auto name = c.snap->str(id);
        c.names.push_back({texts.id(name), default_hidden.search(name), categories.function_rules(name)});
        slot = static_cast<std::uint32_t>(c.names.size());
        return c.names.back();
    }

    // Stripped path and basename ids of a file, for matching frames of a renamed checkout.
    const FileFacts& renaming_facts(Capture& c, snapshot::StringId id) {
        file_facts(c, id);
        auto& f = c.files[c.file_facts[id.value] - 1];
        if (f.stripped == 0 && f.basename == 0) {
            const auto path = texts.text(f.path);
            f.stripped = texts.id_of_temporary(stripped_path(path, c.root)) + 1;
            f.basename = texts.id(basename_of(path)) + 1;
        }
        return f;
    }

    std::uint32_t new_frame(std::size_t capture, const snapshot::Frame& raw) {
        Capture& c = captures[capture];
        const auto& file = file_facts(c, raw.filename);
        const auto& name = name_facts(c, raw.name);
        Entry e;
        e.origin = static_cast<std::uint8_t>(capture);
        e.filename = c.snap->str(raw.filename);
        e.name = c.snap->str(raw.name);
        e.path = file.path;
        e.name_id = name.name;
        e.line = function_granularity ? 0 : raw.line;
        e.flags = file.flags;
        e.hidden = file.hidden || name.hidden;
        e.evaluator = detail::evaluates_python(e.name);
        if (hide || focus) {
            // The user's patterns see the whole frame: work per frame, as they asked.
            const std::string line_text = fmt::format("{}:{} {}", e.filename, raw.line, e.name);
            e.hidden = e.hidden || (hide && hide->search(line_text));
            e.focused = focus && focus->search(line_text);
        }
        e.role.rule = categories.first_rule(file.rules, name.rules, e.flags.python);
        e.role.python = e.flags.python;
        e.role.torch = e.flags.python && file.role.torch;
        e.role.optimizer_wrapper = e.flags.python && file.role.optimizer_wrapper;
        e.role.named_step = e.name == "step";
        e.role.file = file.path;
        frames.push_back(e);
        return static_cast<std::uint32_t>(frames.size() - 1);
    }

    // A frame of the second capture that is not at the same path in the first: the same one
    // under another prefix, or by basename, when the project roots differ.
    std::optional<std::uint32_t> renamed_match(Capture& c, const snapshot::Frame& raw, std::int64_t line,
                                               std::uint32_t name) {
        const auto& f = renaming_facts(c, raw.filename);
        if (const auto it = by_stripped.find({f.stripped, line, name}); it != by_stripped.end()) return it->second;
        if (const auto b = by_basename.find({f.basename, line, name}); b != by_basename.end() && b->second.size() == 1)
            return b->second.front();
        return std::nullopt;
    }

    std::uint32_t map_frame(std::size_t capture, FrameId raw_id) {
        auto& c = captures[capture];
        auto& slot = c.frame_map[raw_id.value];
        if (slot != kUnmapped) return slot;
        const auto& raw = c.snap->frames[raw_id];
        const auto& file = file_facts(c, raw.filename);
        const std::uint32_t path = file.path;
        const bool python = file.flags.python;
        const std::uint32_t name = name_facts(c, raw.name).name;
        const std::int64_t line = function_granularity ? 0 : raw.line;
        const std::uint64_t h = util::mix_hash(
            util::mix_hash(util::mix_hash(util::hash_seed(), path), static_cast<std::uint64_t>(line)), name);
        if (const auto found = by_path.find(h, [&](std::uint32_t i) {
                const Entry& e = frames[i];
                return e.path == path && e.line == line && e.name_id == name;
            })) {
            if (capture == 1 && frames[*found].origin == 0 && frames[*found].flags.user) ++same_path_user;
            return slot = *found;
        }
        if (capture == 1 && roots_differ && python)
            if (const auto match = renamed_match(c, raw, line, name)) {
                ++renamed;
                return slot = *match;
            }
        const std::uint32_t id = new_frame(capture, raw);
        by_path.insert(h, id);
        if (capture == 0 && python && roots_differ) {
            const auto& f = renaming_facts(c, raw.filename);
            by_stripped.emplace(IdKey{f.stripped, line, name}, id);
            by_basename[{f.basename, line, name}].push_back(id);
        }
        return slot = id;
    }

    // The mapped frames of one stack in call order (see call_order.hpp).
    void into_call_order(std::vector<std::uint32_t>& ids) const {
        detail::into_call_order(
            ids, [&](std::uint32_t id) { return frames[id].flags.python; },
            [&](std::uint32_t id) { return frames[id].evaluator; });
    }

    static std::uint64_t stack_hash(std::span<const std::uint32_t> ids) {
        std::uint64_t h = util::hash_seed() ^ ids.size();
        for (auto id : ids) h = util::mix_hash(h, id);
        return h;
    }

    std::uint32_t make_stack(const std::vector<std::uint32_t>& ids) {
        const std::uint64_t h = stack_hash(ids);
        if (const auto found = stack_index.find(h, [&](std::uint32_t i) {
                const auto& s = stacks[i];
                return s.count == ids.size() &&
                       std::equal(ids.begin(), ids.end(), stack_frames.begin() + s.first,
                                  [](std::uint32_t a, CanonFrameId b) { return a == b.value; });
            }))
            return *found;
        Stack s;
        s.first = static_cast<std::uint32_t>(stack_frames.size());
        s.count = static_cast<std::uint32_t>(ids.size());
        auto& flags = scratch_flags;
        flags.clear();
        for (auto f : ids) {
            stack_frames.push_back(CanonFrameId(f));
            flags.push_back(frames[f].flags);
        }
        if (focus) {
            s.focused = false;
            for (auto f : ids) s.focused = s.focused || frames[f].focused;
        }
        const auto pick = pick_site(flags);
        if (pick.index) s.site = static_cast<std::int32_t>(*pick.index);
        s.compiled = pick.compiled;
        stacks.push_back(s);
        const auto id = static_cast<std::uint32_t>(stacks.size() - 1);
        stack_index.insert(h, id);
        return id;
    }
};

StackIndex::StackIndex(std::vector<const Snapshot*> captures, const SiteRules& rules, const StackOptions& options)
    : impl_(std::make_unique<Impl>(rules, options)) {
    for (const Snapshot* snap : captures) {
        Impl::Capture c;
        c.snap = snap;
        c.frame_map.assign(snap->frames.size(), kUnmapped);
        c.stack_map.assign(snap->stacks.size(), kUnmapped);
        c.category_map.assign(snap->stacks.size(), 0);
        c.file_facts.assign(snap->strings.size(), kNoFacts);
        c.name_facts.assign(snap->strings.size(), kNoFacts);
        impl_->captures.push_back(std::move(c));
        impl_->captures.back().root = impl_->root_of(impl_->captures.back());
    }
    // Reserved up front: with deep distinct stacks these are the largest tables, and growing
    // them by doubling would hold two copies at once.
    std::size_t frame_count = 0, stack_frames = 0;
    for (const Snapshot* snap : captures) {
        frame_count = std::max(frame_count, snap->frames.size());
        stack_frames += snap->stacks.frame_count();
    }
    impl_->frames.reserve(frame_count);
    impl_->stack_frames.reserve(stack_frames);
    if (impl_->captures.size() == 2) {
        const auto& a = impl_->captures[0].root;
        const auto& b = impl_->captures[1].root;
        impl_->roots_differ = !a.empty() && !b.empty() && !a.starts_with(b) && !b.starts_with(a);
    }
}

StackIndex::~StackIndex() = default;

namespace {

std::string capped(std::string_view text) {
    constexpr std::size_t half = StackIndex::kMaxFrameText / 2;
    if (text.size() <= StackIndex::kMaxFrameText) return std::string(text);
    return fmt::format("{}…{}", text.substr(0, half), text.substr(text.size() - half));
}

}  // namespace

CanonStackId StackIndex::stack(std::size_t capture, StackId stack) {
    auto& c = impl_->captures[capture];
    if (stack == snapshot::no_stack) return CanonStackId{};
    auto& slot = c.stack_map[stack.value];
    if (slot != kUnmapped) return CanonStackId(slot);
    std::vector<std::uint32_t> ids;
    for (FrameId f : c.snap->stacks.frames(stack)) ids.push_back(impl_->map_frame(capture, f));
    impl_->into_call_order(ids);  // before hiding: the evaluators it goes by are hidden frames
    std::erase_if(ids, [&](std::uint32_t id) { return impl_->frames[id].hidden; });
    slot = ids.empty() ? kAllHidden.value : impl_->make_stack(ids);
    if (c.first_raw.size() <= slot) c.first_raw.resize(slot + 1, 0);
    if (c.first_raw[slot] == 0) c.first_raw[slot] = stack.value + 1;
    return CanonStackId(slot);
}

std::vector<FrameText> StackIndex::recorded_frames(std::size_t capture, CanonStackId stack) const {
    std::vector<FrameText> out;
    const bool known = capture < impl_->captures.size() && stack.value < impl_->captures[capture].first_raw.size() &&
                       impl_->captures[capture].first_raw[stack.value] != 0;
    if (!known) {
        for (const auto f : frames(stack)) out.push_back(frame(f));  // not seen in this capture
        return out;
    }
    const auto& c = impl_->captures[capture];
    const StackId raw(c.first_raw[stack.value] - 1);
    std::vector<FrameId> ordered(c.snap->stacks.frames(raw).begin(), c.snap->stacks.frames(raw).end());
    const auto entry = [&](FrameId f) -> const Impl::Entry* {
        const auto mapped = c.frame_map[f.value];
        return mapped == kUnmapped ? nullptr : &impl_->frames[mapped];
    };
    detail::into_call_order(
        ordered, [&](FrameId f) { return entry(f) && entry(f)->flags.python; },
        [&](FrameId f) { return entry(f) && entry(f)->evaluator; });
    for (const FrameId f : ordered) {
        const auto mapped = c.frame_map[f.value];
        if (mapped == kUnmapped || impl_->frames[mapped].hidden) continue;
        const auto& rf = c.snap->frames[f];
        const auto& e = impl_->frames[mapped];
        out.push_back(
            {capped(c.snap->str(rf.filename)), e.line, capped(c.snap->str(rf.name)), e.flags.python, e.flags.user});
    }
    return out;
}

Category StackIndex::category(std::size_t capture, StackId stack) {
    auto& c = impl_->captures[capture];
    if (stack == snapshot::no_stack) return Category::unknown;
    auto& slot = c.category_map[stack.value];
    if (slot == 0) {
        std::vector<std::uint32_t> ids;
        for (FrameId f : c.snap->stacks.frames(stack)) ids.push_back(impl_->map_frame(capture, f));
        impl_->into_call_order(ids);
        std::vector<FrameRole> roles;
        for (const auto id : ids) roles.push_back(impl_->frames[id].role);
        slot = static_cast<std::uint8_t>(stack_rule(roles) + 1);
    }
    return category_of_rule(static_cast<std::uint8_t>(slot - 1));
}

Category StackIndex::category(std::size_t capture, StackId stack, std::int64_t requested) {
    const auto category = this->category(capture, stack);
    // cuBLAS's default workspace (CUBLAS_WORKSPACE_CONFIG :4096:2:16:8), made by the first matmul
    // of a forward. With C++ frames the workspace rule tells it; a stack of Python frames only
    // names the forward, and its size is all that tells it apart.
    constexpr std::int64_t kCublasDefaultWorkspace = 4096 * 1024 * 2 + 16 * 1024 * 8;
    if (category == Category::activation && requested == kCublasDefaultWorkspace) {
        const auto frames = impl_->captures[capture].snap->stacks.frames(stack);
        if (std::all_of(frames.begin(), frames.end(),
                        [&](snapshot::FrameId f) { return impl_->frames[impl_->map_frame(capture, f)].role.python; }))
            return Category::workspace;
    }
    if (category != Category::autocast_cache && category != Category::gradient) return category;
    auto& c = impl_->captures[capture];
    // Captures without requested sizes give block sizes, rounded to 512 bytes; a trace's
    // allocations are as large as their blocks, which the allocator may round further (large
    // blocks to 2 MiB): a live block is known by both sizes.
    // Wide: a crafted size near 2^63 must not overflow the window (or twice it, for a cast).
    const auto within = [](const std::vector<std::int64_t>& sizes, util::Wide bytes) {
        const util::Wide low = std::max<util::Wide>(bytes - 512, std::numeric_limits<std::int64_t>::min());
        if (low > std::numeric_limits<std::int64_t>::max()) return false;
        const auto near = std::lower_bound(sizes.begin(), sizes.end(), static_cast<std::int64_t>(low));
        return near != sizes.end() && util::Wide{*near} <= bytes + 512;
    };
    const auto sizes_of = [&](auto keep) {
        std::vector<std::int64_t> sizes;
        for (const auto& b : c.snap->blocks)
            if (b.live() && keep(b)) {
                sizes.push_back(b.requested_size);
                if (b.size != b.requested_size) sizes.push_back(b.size);
            }
        std::sort(sizes.begin(), sizes.end());
        return sizes;
    };
    if (category == Category::autocast_cache) {
        // What a cached weight copy is a copy of: a live parameter, or a live block without a
        // stack in this capture that records stacks (made before recording began, as weights
        // usually are). An activation's cast copies a block made while recording.
        if (!c.weight_sizes)
            c.weight_sizes = sizes_of([&](const snapshot::Block& b) {
                return b.stack == snapshot::no_stack || this->category(capture, b.stack) == Category::parameter;
            });
        return within(*c.weight_sizes, 2 * util::Wide{requested}) ? Category::autocast_cache : Category::activation;
    }
    // A gradient that backward leaves in .grad has the size of its leaf (a parameter, or any
    // tensor that requires grad), which lives as long as it does. What backward makes in no
    // live block's size are gradients of activations, the engine's temporaries. With nothing
    // live, no telling.
    if (!c.leaf_sizes)
        c.leaf_sizes =
            sizes_of([&](const snapshot::Block& b) { return this->category(capture, b.stack) != Category::gradient; });
    return c.leaf_sizes->empty() || within(*c.leaf_sizes, requested) ? Category::gradient : Category::autograd_detail;
}

std::span<const CanonFrameId> StackIndex::frames(CanonStackId stack) const {
    const auto& s = impl_->stacks[stack.value];
    return {impl_->stack_frames.data() + s.first, s.count};
}

FrameText StackIndex::frame(CanonFrameId frame) const {
    const auto& e = impl_->frames[frame.value];
    return {capped(e.filename), e.line, capped(e.name), e.flags.python, e.flags.user};
}

bool StackIndex::is_forward(CanonFrameId frame) const {
    const auto& e = impl_->frames[frame.value];
    return is_forward_frame(e.flags.python, e.filename, e.name);
}

const FrameFlags& StackIndex::flags(CanonFrameId frame) const { return impl_->frames[frame.value].flags; }

bool StackIndex::focused(CanonStackId stack) const {
    // Nothing recorded, or every frame hidden: no frame to match a --focus pattern.
    if (impl_->focus && stack.value <= kAllHidden.value) return false;
    return impl_->stacks[stack.value].focused;
}

SiteKey StackIndex::site(CanonStackId stack) const {
    SiteKey key;
    if (stack.value == 0) {
        key.name = no_stack_site;
        return key;
    }
    const auto& s = impl_->stacks[stack.value];
    if (s.site < 0) {
        key.name = no_python_site;
        return key;
    }
    const auto& e = impl_->frames[impl_->stack_frames[s.first + static_cast<std::uint32_t>(s.site)].value];
    return {capped(e.filename), capped(e.name), e.line, e.flags.user, s.compiled};
}

std::uint64_t StackIndex::site_token(CanonStackId stack) const {
    if (stack.value == 0) return 0;
    const auto& s = impl_->stacks[stack.value];
    if (s.site < 0) return 1;
    const std::uint64_t frame = impl_->stack_frames[s.first + static_cast<std::uint32_t>(s.site)].value;
    return 2 + 2 * frame + (s.compiled ? 1 : 0);
}

const std::string& StackIndex::project_root(std::size_t capture) const { return impl_->captures[capture].root; }
std::size_t StackIndex::renamed_frame_matches() const { return impl_->renamed; }
std::size_t StackIndex::same_path_user_frames() const { return impl_->same_path_user; }

bool is_forward_frame(bool python, std::string_view filename, std::string_view name) {
    return python &&
           (name == "forward" || name == "_call_impl" || filename.find("torch/nn/modules/") != std::string::npos);
}

bool is_forward_frame(const FrameText& frame) { return is_forward_frame(frame.python, frame.filename, frame.name); }

}  // namespace memsnap::analysis
