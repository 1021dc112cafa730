#include <memsnap/analysis/stack_index.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/pattern.hpp>

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>

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

constexpr std::uint32_t kUnmapped = std::numeric_limits<std::uint32_t>::max();
const CanonStackId kAllHidden{1};  // recorded, every frame dropped

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// The longest common prefix of two directories ("/a/b/"), cut at a '/'.
std::string common_directory(const std::string& a, const std::string& b) {
    std::size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    const auto slash = a.rfind('/', n == 0 ? 0 : n - 1);
    return slash == std::string::npos ? std::string() : a.substr(0, slash + 1);
}

// A path without the prefix that differs between installs and checkouts.
std::string stripped_path(const std::string& path, const std::string& root) {
    for (const char* marker : {"site-packages/", "dist-packages/"})
        if (const auto at = path.rfind(marker); at != std::string::npos)
            return "lib:" + path.substr(at + std::string_view(marker).size());
    if (const auto at = path.find("/lib/python"); at != std::string::npos)
        if (const auto next = path.find('/', at + 11); next != std::string::npos)
            return "std:" + path.substr(next + 1);
    if (const auto at = path.find("/Lib/"); at != std::string::npos) return "std:" + path.substr(at + 5);
    if (const auto at = path.find("torchinductor_"); at != std::string::npos)
        if (const auto next = path.find('/', at); next != std::string::npos)
            return "gen:" + path.substr(next + 1);
    if (!root.empty() && path.starts_with(root)) return "proj:" + path.substr(root.size());
    return path;
}

std::string basename_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string frame_key(std::string_view path, std::int64_t line, std::string_view name) {
    return fmt::format("{}\x1f{}\x1f{}", path, line, name);
}

}  // namespace

struct StackIndex::Impl {
    struct Entry {
        FrameText text;
        FrameFlags flags;
        std::string path;  // normalised
        bool hidden = false, focused = false;
        std::uint8_t rule = 0;    // category rule
        std::size_t origin = 0;  // the capture that brought the frame in
    };
    struct Capture {
        const Snapshot* snap = nullptr;
        std::string root;
        std::vector<std::uint32_t> frame_map;  // FrameId -> CanonFrameId, kUnmapped
        std::vector<std::uint32_t> stack_map;  // StackId -> CanonStackId, kUnmapped
        std::vector<std::uint8_t> category_map;  // StackId -> rule + 1, 0 unknown yet
    };
    struct Stack {
        std::vector<CanonFrameId> frames;
        SiteKey site;
        bool focused = true;
    };

    FrameClassifier classifier;
    CategoryClassifier categories;
    std::optional<util::Pattern> hide, focus;
    bool function_granularity = false;
    std::vector<Capture> captures;
    bool roots_differ = false;
    std::vector<Entry> frames;
    std::map<std::string, std::uint32_t> by_path;      // exact key -> frame
    std::map<std::string, std::uint32_t> by_stripped;  // first capture's frames
    std::map<std::string, std::vector<std::uint32_t>> by_basename;
    std::vector<Stack> stacks;
    std::map<std::vector<std::uint32_t>, std::uint32_t> stack_index;
    std::size_t renamed = 0, same_path_user = 0;

    Impl(const SiteRules& rules, const StackOptions& options) : classifier(rules) {
        std::vector<std::string> hidden{default_hidden_frames};
        hidden.insert(hidden.end(), options.hide.begin(), options.hide.end());
        hide = util::Pattern::any_of(hidden, "--hide");
        focus = util::Pattern::any_of(options.focus, "--focus");
        function_granularity = options.function_granularity;
        stacks.push_back({});                                // 0: nothing recorded
        stacks.push_back({{}, SiteKey{}, true});             // 1: all frames hidden
        stacks[0].site.name = no_stack_site;
        stacks[1].site.name = no_python_site;
    }

    std::string root_of(const Snapshot& snap) {
        std::optional<std::string> root;
        std::map<std::uint32_t, bool> seen;  // filename string -> user code with a directory
        for (std::size_t f = 0; f < snap.frames.size(); ++f) {
            const auto filename = snap.frames[FrameId(static_cast<std::uint32_t>(f))].filename;
            auto [it, inserted] = seen.try_emplace(filename.value, false);
            if (!inserted) continue;
            const auto text = snap.str(filename);
            if (!classifier.classify(text).user) continue;
            const auto dir = directory_of(normalized_path(text));
            if (dir.empty()) continue;
            root = root ? common_directory(*root, dir) : dir;
        }
        return root && *root != "/" ? *root : std::string();
    }

    std::uint32_t new_frame(std::size_t capture, const snapshot::Frame& raw, std::string path) {
        const Capture& c = captures[capture];
        Entry e;
        e.origin = capture;
        const auto filename = c.snap->str(raw.filename);
        const auto name = c.snap->str(raw.name);
        e.flags = classifier.classify(filename);
        e.text = {std::string(filename), function_granularity ? 0 : raw.line, std::string(name), e.flags.python};
        const std::string line_text = fmt::format("{}:{} {}", filename, raw.line, name);
        e.hidden = hide->search(line_text);
        e.focused = focus && focus->search(line_text);
        e.rule = categories.classify_frame(path, name, e.flags.python);
        e.path = std::move(path);
        frames.push_back(std::move(e));
        return static_cast<std::uint32_t>(frames.size() - 1);
    }

    std::uint32_t map_frame(std::size_t capture, FrameId raw_id) {
        auto& c = captures[capture];
        auto& slot = c.frame_map[raw_id.value];
        if (slot != kUnmapped) return slot;
        const auto& raw = c.snap->frames[raw_id];
        std::string path = normalized_path(c.snap->str(raw.filename));
        const std::int64_t line = function_granularity ? 0 : raw.line;
        const auto name = c.snap->str(raw.name);
        const std::string exact = frame_key(path, line, name);
        if (const auto it = by_path.find(exact); it != by_path.end()) {
            if (capture == 1 && frames[it->second].origin == 0 && frames[it->second].flags.user) ++same_path_user;
            return slot = it->second;
        }
        const bool python = classifier.classify(c.snap->str(raw.filename)).python;
        const std::string stripped = frame_key(stripped_path(path, c.root), line, name);
        const std::string base = frame_key(basename_of(path), line, name);
        if (capture == 1 && roots_differ && python) {
            std::optional<std::uint32_t> match;
            if (const auto it = by_stripped.find(stripped); it != by_stripped.end()) match = it->second;
            else if (const auto b = by_basename.find(base); b != by_basename.end() && b->second.size() == 1)
                match = b->second.front();
            if (match) {
                ++renamed;
                by_path.emplace(exact, *match);
                return slot = *match;
            }
        }
        const std::uint32_t id = new_frame(capture, raw, path);
        by_path.emplace(exact, id);
        if (capture == 0 && python) {
            by_stripped.emplace(stripped, id);
            by_basename[base].push_back(id);
        }
        return slot = id;
    }

    std::uint32_t make_stack(std::vector<std::uint32_t> ids) {
        auto [it, inserted] = stack_index.try_emplace(std::move(ids), static_cast<std::uint32_t>(stacks.size()));
        if (!inserted) return it->second;
        Stack s;
        std::vector<FrameFlags> flags;
        for (auto f : it->first) {
            s.frames.push_back(CanonFrameId(f));
            flags.push_back(frames[f].flags);
        }
        if (focus) {
            s.focused = false;
            for (auto f : it->first) s.focused = s.focused || frames[f].focused;
        }
        const auto pick = pick_site(flags);
        if (!pick.index) {
            s.site.name = no_python_site;
        } else {
            const auto& e = frames[it->first[*pick.index]];
            s.site = {e.text.filename, e.text.name, e.text.line, e.flags.user, pick.compiled};
        }
        stacks.push_back(std::move(s));
        return it->second;
    }
};

StackIndex::StackIndex(std::vector<const Snapshot*> captures, const SiteRules& rules,
                       const StackOptions& options)
    : impl_(std::make_unique<Impl>(rules, options)) {
    for (const Snapshot* snap : captures) {
        Impl::Capture c;
        c.snap = snap;
        c.root = impl_->root_of(*snap);
        c.frame_map.assign(snap->frames.size(), kUnmapped);
        c.stack_map.assign(snap->stacks.size(), kUnmapped);
        c.category_map.assign(snap->stacks.size(), 0);
        impl_->captures.push_back(std::move(c));
    }
    if (impl_->captures.size() == 2) {
        const auto& a = impl_->captures[0].root;
        const auto& b = impl_->captures[1].root;
        impl_->roots_differ = !a.empty() && !b.empty() && !a.starts_with(b) && !b.starts_with(a);
    }
}

StackIndex::~StackIndex() = default;

CanonStackId StackIndex::stack(std::size_t capture, StackId stack) {
    auto& c = impl_->captures[capture];
    if (stack == snapshot::no_stack) return CanonStackId{};
    auto& slot = c.stack_map[stack.value];
    if (slot != kUnmapped) return CanonStackId(slot);
    std::vector<std::uint32_t> ids;
    for (FrameId f : c.snap->stacks.frames(stack)) {
        const auto id = impl_->map_frame(capture, f);
        if (!impl_->frames[id].hidden) ids.push_back(id);
    }
    slot = ids.empty() ? kAllHidden.value : impl_->make_stack(std::move(ids));
    return CanonStackId(slot);
}

Category StackIndex::category(std::size_t capture, StackId stack) {
    auto& c = impl_->captures[capture];
    if (stack == snapshot::no_stack) return Category::unknown;
    auto& slot = c.category_map[stack.value];
    if (slot == 0) {
        std::uint8_t best = static_cast<std::uint8_t>(category_rules().size());
        for (FrameId f : c.snap->stacks.frames(stack))
            best = std::min(best, impl_->frames[impl_->map_frame(capture, f)].rule);
        slot = static_cast<std::uint8_t>(best + 1);
    }
    return category_of_rule(static_cast<std::uint8_t>(slot - 1));
}

std::span<const CanonFrameId> StackIndex::frames(CanonStackId stack) const {
    return impl_->stacks[stack.value].frames;
}
const FrameText& StackIndex::frame(CanonFrameId frame) const { return impl_->frames[frame.value].text; }
const FrameFlags& StackIndex::flags(CanonFrameId frame) const { return impl_->frames[frame.value].flags; }
bool StackIndex::focused(CanonStackId stack) const {
    // Nothing recorded, or every frame hidden: no frame to match a --focus pattern.
    if (impl_->focus && stack.value <= kAllHidden.value) return false;
    return impl_->stacks[stack.value].focused;
}
SiteKey StackIndex::site(CanonStackId stack) const { return impl_->stacks[stack.value].site; }
const std::string& StackIndex::project_root(std::size_t capture) const { return impl_->captures[capture].root; }
std::size_t StackIndex::renamed_frame_matches() const { return impl_->renamed; }
std::size_t StackIndex::same_path_user_frames() const { return impl_->same_path_user; }

}  // namespace memsnap::analysis
