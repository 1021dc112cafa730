#include <memsnap/analysis/diagnosis.hpp>
#include <memsnap/analysis/growth_graph.hpp>
#include <memsnap/analysis/snapshot_diff.hpp>
#include <memsnap/analysis/summary.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <unordered_map>

namespace memsnap::analysis {

// Function and file fragments of PyTorch's viewer filter (_memory_viz.py), plus the caching
// allocator itself: none of these say anything about who allocated.
const char* const default_hidden_frames =
    R"(unwind::unwind|CapturedTraceback::gather|gather_with_cpp|__libc_start_main|(^| )_start$|)"
    R"(PyEval_|PyObject_|PyFunction_|core/boxing|/Register|/Redispatch|pythonrun\.c|)"
    R"(Modules/main\.c|Objects/call\.c|Objects/methodobject\.c|pycore_ceval\.h|ceval\.c|)"
    R"(cpython/abstract\.h|CUDACachingAllocator)";

namespace {

using snapshot::Snapshot;
using snapshot::StackId;

std::regex compile_any(const std::vector<std::string>& patterns, const char* option) {
    std::string joined;
    for (const auto& p : patterns) joined += (joined.empty() ? "" : "|") + ("(?:" + p + ")");
    try {
        return std::regex(joined, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
        throw usage_error(fmt::format("{}: invalid regular expression: {}", option, e.what()));
    }
}

// Frames and stacks interned across both captures, so they compare by id.
class CanonicalStacks {
public:
    CanonicalStacks(const SnapshotDiffOptions& options)
        : function_granularity_(options.function_granularity), rule_(options.rules) {
        std::vector<std::string> hidden{default_hidden_frames};
        hidden.insert(hidden.end(), options.hide.begin(), options.hide.end());
        hide_ = compile_any(hidden, "--hide");
        if (!options.focus.empty()) focus_ = compile_any(options.focus, "--focus");
    }

    struct Mapping {
        std::vector<std::int64_t> frame;   // snapshot FrameId -> canonical id, -1 hidden
        std::unordered_map<StackId, std::uint32_t> stack;  // snapshot StackId -> canonical
    };

    Mapping map_snapshot(const Snapshot& snap) {
        Mapping m;
        m.frame.resize(snap.frames.size());
        for (snapshot::FrameId f = 0; f < snap.frames.size(); ++f) {
            const auto& fr = snap.frames[f];
            FrameText text{std::string(snap.str(fr.filename)),
                           function_granularity_ ? 0 : fr.line, std::string(snap.str(fr.name))};
            const std::string line = fmt::format("{}:{} {}", text.filename, fr.line, text.name);
            m.frame[f] = std::regex_search(line, hide_) ? std::int64_t{-1}
                                                        : std::int64_t{frame_id(text, line)};
        }
        return m;
    }

    std::uint32_t stack_of(const Snapshot& snap, Mapping& m, StackId stack) {
        if (auto it = m.stack.find(stack); it != m.stack.end()) return it->second;
        std::vector<std::uint32_t> frames;
        for (auto f : snap.stacks.frames(stack))
            if (m.frame[f] >= 0) frames.push_back(static_cast<std::uint32_t>(m.frame[f]));
        std::string key(reinterpret_cast<const char*>(frames.data()), frames.size() * 4);
        if (stack != 0 && frames.empty()) key = "<hidden>";  // recorded, all frames dropped
        auto [it, inserted] = stack_index_.try_emplace(key, stacks_.size());
        if (inserted) stacks_.push_back(std::move(frames));
        m.stack.emplace(stack, it->second);
        return it->second;
    }

    const std::vector<std::uint32_t>& frames(std::uint32_t stack) const { return stacks_[stack]; }
    const FrameText& frame(std::uint32_t id) const { return frames_[id].text; }
    bool is_user(std::uint32_t id) const { return frames_[id].user; }
    bool is_python(std::uint32_t id) const { return frames_[id].python; }
    bool focused(std::uint32_t stack) const {
        if (!focus_) return true;
        for (auto f : stacks_[stack])
            if (frames_[f].focused) return true;
        return false;
    }

    // The site of a canonical stack: innermost user frame, else innermost Python frame.
    SiteKey site(std::uint32_t stack, bool recorded) const {
        SiteKey key;
        if (!recorded) {
            key.name = no_stack_site;
            return key;
        }
        std::optional<std::uint32_t> python;
        for (auto f : stacks_[stack]) {
            if (frames_[f].user) return make_key(f, true);
            if (!python && frames_[f].python) python = f;
        }
        if (python) return make_key(*python, false);
        key.name = no_python_site;
        return key;
    }

private:
    struct Entry {
        FrameText text;
        bool python = false, user = false, focused = false;
    };

    SiteKey make_key(std::uint32_t f, bool user) const {
        SiteKey key;
        key.filename = frames_[f].text.filename;
        key.name = frames_[f].text.name;
        key.line = frames_[f].text.line;
        key.user_code = user;
        return key;
    }

    std::uint32_t frame_id(const FrameText& text, const std::string& line) {
        auto [it, inserted] = frame_index_.try_emplace(text, frames_.size());
        if (inserted) {
            Entry e;
            e.text = text;
            e.python = UserCodeRule::is_python(text.filename);
            e.user = e.python && rule_.is_user_code(text.filename);
            e.focused = focus_ && std::regex_search(line, *focus_);
            frames_.push_back(std::move(e));
        }
        return it->second;
    }

    bool function_granularity_;
    UserCodeRule rule_;
    std::regex hide_;
    std::optional<std::regex> focus_;
    std::vector<Entry> frames_;
    std::map<FrameText, std::uint32_t> frame_index_;
    std::vector<std::vector<std::uint32_t>> stacks_;
    std::unordered_map<std::string, std::uint32_t> stack_index_;
};

struct LiveBlock {
    std::int64_t address;
    std::int64_t size;
    std::uint32_t stack;  // canonical
    bool recorded;        // the capture had a stack for it
};

struct GroupKey {
    std::uint32_t stack;
    std::int64_t size;
    bool operator==(const GroupKey&) const = default;
};
struct GroupKeyHash {
    std::size_t operator()(const GroupKey& k) const {
        return std::hash<std::uint64_t>()((static_cast<std::uint64_t>(k.stack) << 40) ^
                                          static_cast<std::uint64_t>(k.size));
    }
};

struct GroupCounts {
    std::int64_t before = 0, after = 0, survivors = 0, recorded = 0;
};

std::vector<LiveBlock> live_blocks(const Snapshot& snap, CanonicalStacks& canon,
                                   CanonicalStacks::Mapping& mapping,
                                   const SnapshotDiffOptions& options, std::int64_t& pending) {
    std::vector<LiveBlock> out;
    for (const auto& b : snap.blocks) {
        if (options.device && snap.segments[b.segment].device != *options.device) continue;
        if (b.state == snapshot::BlockState::active_pending_free) pending += b.size;
        if (!b.live()) continue;
        const std::uint32_t stack = canon.stack_of(snap, mapping, b.stack);
        if (!canon.focused(stack)) continue;
        out.push_back({b.address, b.size, stack, b.stack != 0});
    }
    return out;
}

TotalChange change(std::int64_t before, std::int64_t after,
                   const std::optional<std::pair<std::int64_t, std::int64_t>>& steps) {
    TotalChange c{before, after, after - before, 0};
    c.per_step = steps ? static_cast<double>(c.delta) / static_cast<double>(steps->second - steps->first)
                       : static_cast<double>(c.delta);
    return c;
}

SiteVerdict site_verdict(std::int64_t delta_bytes, std::int64_t delta_blocks) {
    if (delta_bytes < 0) return SiteVerdict::freed;
    if (delta_bytes == 0) return SiteVerdict::stable;
    return delta_blocks > 0 ? SiteVerdict::leak : SiteVerdict::shape_growth;
}

}  // namespace

std::string_view to_string(SiteVerdict verdict) {
    switch (verdict) {
        case SiteVerdict::leak: return "leak";
        case SiteVerdict::shape_growth: return "shape_growth";
        case SiteVerdict::freed: return "freed";
        case SiteVerdict::stable: return "stable";
    }
    return "stable";
}

const TotalChange& SnapshotDiff::total(std::string_view name) const {
    for (const auto& [key, value] : totals)
        if (key == name) return value;
    throw std::out_of_range("no total named " + std::string(name));
}

SnapshotDiff diff_snapshots(const Snapshot& before, const Snapshot& after,
                            const SnapshotDiffOptions& options) {
    SnapshotDiff diff;
    diff.before_file = before.source.path;
    diff.after_file = after.source.path;
    diff.steps = options.steps;
    const auto& steps = options.steps;

    CanonicalStacks canon(options);
    auto map_before = canon.map_snapshot(before);
    auto map_after = canon.map_snapshot(after);
    const auto old_blocks = live_blocks(before, canon, map_before, options, diff.pending_free_before);
    const auto new_blocks = live_blocks(after, canon, map_after, options, diff.pending_free_after);
    diff.live_blocks_before = static_cast<std::int64_t>(old_blocks.size());
    diff.live_blocks_after = static_cast<std::int64_t>(new_blocks.size());

    // Without any recorded stack, stacks say nothing: group by block size alone.
    bool any_recorded = false;
    for (const auto& b : old_blocks) any_recorded |= b.recorded;
    for (const auto& b : new_blocks) any_recorded |= b.recorded;
    diff.stacks_recorded = any_recorded;

    // Survivors: same address, size and stack in both captures.
    struct AddressKey {
        std::int64_t address, size;
        std::uint32_t stack;
        bool operator==(const AddressKey&) const = default;
    };
    struct AddressKeyHash {
        std::size_t operator()(const AddressKey& k) const {
            return std::hash<std::int64_t>()(k.address) ^ (std::hash<std::int64_t>()(k.size) << 1) ^
                   (static_cast<std::size_t>(k.stack) << 7);
        }
    };
    std::unordered_map<AddressKey, std::int64_t, AddressKeyHash> alive_before;
    std::unordered_map<GroupKey, GroupCounts, GroupKeyHash> groups;
    for (const auto& b : old_blocks) {
        ++alive_before[{b.address, b.size, b.stack}];
        auto& g = groups[{b.stack, b.size}];
        ++g.before;
        g.recorded += b.recorded;
    }
    for (const auto& b : new_blocks) {
        auto& g = groups[{b.stack, b.size}];
        ++g.after;
        g.recorded += b.recorded;
        auto it = alive_before.find({b.address, b.size, b.stack});
        if (it != alive_before.end() && it->second > 0) {
            --it->second;
            ++g.survivors;
        }
    }

    // Sites: groups of (stack, size) under their innermost user frame.
    struct SiteAccumulator {
        SiteChange change;
        std::vector<std::pair<GroupKey, GroupCounts>> groups;
    };
    std::map<SiteKey, SiteAccumulator> sites;
    for (const auto& [key, counts] : groups) {
        SiteKey site = any_recorded ? canon.site(key.stack, counts.recorded > 0) : SiteKey{};
        if (!any_recorded)
            site.name = fmt::format("<no stack: {}-byte blocks>", key.size);
        auto& acc = sites[site];
        acc.change.site = site;
        auto& c = acc.change;
        c.before_blocks += counts.before;
        c.after_blocks += counts.after;
        c.before_bytes += counts.before * key.size;
        c.after_bytes += counts.after * key.size;
        c.survivor_blocks += counts.survivors;
        c.gone_blocks += counts.before - counts.survivors;
        c.new_blocks += counts.after - counts.survivors;
        acc.groups.emplace_back(key, counts);
    }

    const auto totals_before = compute_totals(before, options.device.value_or(-1));
    const auto totals_after = compute_totals(after, options.device.value_or(-1));
    diff.totals = {
        {"allocated_bytes", change(totals_before.allocated_bytes, totals_after.allocated_bytes, steps)},
        {"reserved_bytes", change(totals_before.reserved_bytes, totals_after.reserved_bytes, steps)},
        {"active_bytes", change(totals_before.active_bytes, totals_after.active_bytes, steps)},
        {"requested_bytes", change(totals_before.requested_bytes, totals_after.requested_bytes, steps)},
        {"inactive_bytes", change(totals_before.inactive_bytes, totals_after.inactive_bytes, steps)},
        {"inactive_split_bytes", change(totals_before.external_fragmentation_bytes,
                                        totals_after.external_fragmentation_bytes, steps)},
        {"releasable_bytes", change(totals_before.releasable_bytes, totals_after.releasable_bytes, steps)},
    };
    const auto& allocated = diff.total("allocated_bytes");

    VerdictInput verdict_input;
    verdict_input.allocated_before = ByteRange::exact(allocated.before);
    verdict_input.allocated_delta = ByteRange::exact(allocated.delta);
    verdict_input.reserved_before = ByteRange::exact(diff.total("reserved_bytes").before);
    verdict_input.reserved_delta = ByteRange::exact(diff.total("reserved_bytes").delta);
    verdict_input.inactive_split_before = ByteRange::exact(diff.total("inactive_split_bytes").before);
    verdict_input.inactive_split_delta = ByteRange::exact(diff.total("inactive_split_bytes").delta);
    diff.verdict = classify(verdict_input);

    // Rank, and keep the frames of each site's growth for the graph and the diagnosis.
    GrowthGraph graph;
    std::vector<SiteChange> ranked;
    std::vector<std::vector<std::pair<GroupKey, GroupCounts>>> groups_of;
    for (auto& [key, acc] : sites) {
        auto& c = acc.change;
        c.delta_bytes = c.after_bytes - c.before_bytes;
        c.delta_blocks = c.after_blocks - c.before_blocks;
        c.growth_bytes_per_step = change(c.before_bytes, c.after_bytes, steps).per_step;
        c.share = allocated.delta > 0 ? static_cast<double>(c.delta_bytes) /
                                            static_cast<double>(allocated.delta)
                                      : 0.0;
        c.verdict = site_verdict(c.delta_bytes, c.delta_blocks);
        ranked.push_back(std::move(c));
        groups_of.push_back(std::move(acc.groups));
    }
    std::vector<std::size_t> order(ranked.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const auto& x = ranked[a];
        const auto& y = ranked[b];
        if (x.growth_bytes_per_step != y.growth_bytes_per_step)
            return x.growth_bytes_per_step > y.growth_bytes_per_step;
        if (x.after_bytes != y.after_bytes) return x.after_bytes > y.after_bytes;
        return x.site < y.site;
    });

    std::vector<std::vector<FrameText>> growth_frames(ranked.size());
    for (std::size_t r = 0; r < order.size(); ++r) {
        const std::size_t i = order[r];
        SiteChange site = std::move(ranked[i]);
        site.rank = r + 1;
        auto& site_groups = groups_of[i];
        // Representative stacks: the biggest changes first, ties by stack then size.
        std::sort(site_groups.begin(), site_groups.end(), [](const auto& a, const auto& b) {
            const std::int64_t da = std::abs((a.second.after - a.second.before) * a.first.size);
            const std::int64_t db = std::abs((b.second.after - b.second.before) * b.first.size);
            if (da != db) return da > db;
            if (a.first.stack != b.first.stack) return a.first.stack < b.first.stack;
            return a.first.size < b.first.size;
        });
        for (const auto& [key, counts] : site_groups) {
            const std::int64_t delta_blocks = counts.after - counts.before;
            const std::int64_t delta_bytes = delta_blocks * key.size;
            if (delta_bytes > 0) {
                graph.add_stack(canon.frames(key.stack), delta_bytes, r);
                for (auto f : canon.frames(key.stack)) growth_frames[r].push_back(canon.frame(f));
            }
            if (diff.stacks_recorded && (site.stacks.size() < 3 || delta_bytes != 0)) {
                RepresentativeStack rs;
                rs.size = key.size;
                rs.delta_blocks = delta_blocks;
                rs.delta_bytes = delta_bytes;
                for (auto f : canon.frames(key.stack)) rs.frames.push_back(canon.frame(f));
                if (site.stacks.size() < 3) site.stacks.push_back(rs);
                if (delta_bytes != 0) diff.changed_stacks.push_back(std::move(rs));
            }
        }
        site.diagnosis = diagnose_site(site, growth_frames[r], steps);
        diff.survivors += site.survivor_blocks;
        diff.new_blocks += site.new_blocks;
        diff.gone_blocks += site.gone_blocks;
        diff.sites.push_back(std::move(site));
    }

    // Where many growing sites meet: a user frame carrying most of the growth over >= 2 sites.
    // Only worth saying when the growth is spread, i.e. no single site carries most of it.
    std::int64_t top_site_growth = 0;
    for (const auto& s : diff.sites) top_site_growth = std::max(top_site_growth, s.delta_bytes);
    const bool spread = static_cast<double>(top_site_growth) < 0.8 * static_cast<double>(graph.total_growth());
    if (const auto c = spread ? graph.convergence([&](std::uint32_t f) { return canon.is_user(f); }, 0.8, 2)
                              : std::nullopt) {
        Convergence conv;
        conv.frame = canon.frame(c->frame);
        conv.inclusive_bytes = c->inclusive;
        conv.exclusive_bytes = c->exclusive;
        conv.share = static_cast<double>(c->inclusive) / static_cast<double>(graph.total_growth());
        conv.sites = c->sites;
        diff.convergence = conv;
    }
    diff.overall = diagnose_overall(diff, growth_frames);

    if (!steps) diff.notes.push_back("steps unknown: growth is given per capture (use --steps A,B)");
    if (!diff.stacks_recorded)
        diff.notes.push_back(
            "no allocation stacks were recorded: blocks are grouped by size alone (record with "
            "torch.cuda.memory._record_memory_history() to see sites)");
    if (!options.focus.empty())
        diff.notes.push_back("--focus keeps only matching stacks: sites do not add up to the totals");
    if (diff.pending_free_before != 0 || diff.pending_free_after != 0)
        diff.notes.push_back(fmt::format(
            "blocks pending free (freed, still in use on another stream) are counted apart: {} "
            "before, {} after",
            util::human_bytes(diff.pending_free_before), util::human_bytes(diff.pending_free_after)));
    return diff;
}

std::optional<std::string> check_growth_gate(const SnapshotDiff& diff, std::int64_t bytes_per_step) {
    const char* unit = diff.steps ? "step" : "capture";
    const auto& allocated = diff.total("allocated_bytes");
    if (allocated.per_step > static_cast<double>(bytes_per_step))
        return fmt::format("allocated memory grows {}/{}, over the limit of {}/{}",
                           util::signed_bytes(static_cast<std::int64_t>(allocated.per_step)), unit,
                           util::human_bytes(bytes_per_step), unit);
    for (const auto& site : diff.sites)
        if (site.growth_bytes_per_step > static_cast<double>(bytes_per_step))
            return fmt::format("site {} grows {}/{}, over the limit of {}/{}", site.site.label(),
                               util::signed_bytes(static_cast<std::int64_t>(site.growth_bytes_per_step)),
                               unit, util::human_bytes(bytes_per_step), unit);
    return std::nullopt;
}

}  // namespace memsnap::analysis
