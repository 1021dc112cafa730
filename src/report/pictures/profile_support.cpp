#include "profile_support.hpp"

#include <memsnap/util/format.hpp>
#include <memsnap/util/hash.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>

namespace memsnap::report::detail {

std::string xml_text(std::string_view raw) {
    const std::string text = util::printable(raw);
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&#39;";
                break;
            default:
                out += c;
        }
    }
    return out;
}

std::string profile_title(const analysis::StackProfile& p) {
    using Kind = analysis::ProfileSubject::Kind;
    const auto& s = p.subject;
    switch (s.kind) {
        case Kind::live:
            return fmt::format("live memory of {}", s.file);
        case Kind::live_at_peak:
            return fmt::format("live at the peak of {} ({} allocated, event {})", s.file, util::human_bytes(s.bytes),
                               s.number);
        case Kind::live_at_end:
            return fmt::format("live at the end of {}", s.file);
        case Kind::diff:
            return fmt::format("{} → {}", s.file, s.other_file);
        case Kind::trend_sites:
            return fmt::format("sites over {} captures", s.number);
        case Kind::ranks:
            return fmt::format("live memory of {} ranks", s.number);
    }
    return s.file;
}

std::string side_measure(const analysis::StackProfile& p, analysis::Side side) {
    if (!p.differential) return p.measure;
    return side == analysis::Side::before ? "bytes before" : side == analysis::Side::after ? "bytes after" : "growth";
}

analysis::StackProfile shown_stacks(const analysis::StackProfile& profile, bool cpp_frames) {
    analysis::StackProfile out;
    out.subject = profile.subject;
    out.measure = profile.measure;
    out.differential = profile.differential;
    out.frame_table = profile.frame_table;
    out.samples.reserve(profile.samples.size());
    std::optional<std::uint32_t> no_stack;
    // Samples that show alike (same shown frames, omitted count and category) become one; they
    // are found by a seeded hash of what shows, compared in full against the samples kept.
    std::unordered_multimap<std::uint64_t, std::size_t> kept_by_hash;
    kept_by_hash.reserve(profile.samples.size());
    const auto same = [](const analysis::ProfileSample& a, const std::vector<std::uint32_t>& frames,
                         const analysis::ProfileSample& b) {
        return a.frames == frames && a.frames_omitted == b.frames_omitted && a.category == b.category;
    };
    for (const auto& s : profile.samples) {
        std::vector<std::uint32_t> frames;
        frames.reserve(s.frames.size());
        const bool has_python = std::any_of(s.frames.begin(), s.frames.end(),
                                            [&](std::uint32_t f) { return profile.frame_table[f].python; });
        for (const auto f : s.frames)
            if (cpp_frames || !has_python || profile.frame_table[f].python) frames.push_back(f);
        if (frames.empty() && s.frames_omitted == 0) {
            if (!no_stack) {
                no_stack = static_cast<std::uint32_t>(out.frame_table.size());
                out.frame_table.push_back({"", 0, "<no stack>", true});
            }
            frames.push_back(*no_stack);
        }
        std::uint64_t hash = util::mix_hash(util::hash_seed(), s.frames_omitted);
        hash = util::mix_hash(hash, static_cast<std::uint64_t>(s.category));
        for (const auto f : frames) hash = util::mix_hash(hash, f);
        const auto [first, last] = kept_by_hash.equal_range(hash);
        const auto match =
            std::find_if(first, last, [&](const auto& kept) { return same(out.samples[kept.second], frames, s); });
        if (match == last) {
            kept_by_hash.emplace(hash, out.samples.size());
            out.samples.push_back(
                {std::move(frames), s.frames_omitted, s.category, s.bytes, s.count, s.base_bytes, s.base_count});
            continue;
        }
        auto& into = out.samples[match->second];
        into.bytes += s.bytes;
        into.count += s.count;
        into.base_bytes += s.base_bytes;
        into.base_count += s.base_count;
    }
    return out;
}

namespace {

std::vector<std::pair<const analysis::ProfileSample*, std::int64_t>> changes(const analysis::StackProfile& profile) {
    std::vector<std::pair<const analysis::ProfileSample*, std::int64_t>> out;
    for (const auto& s : profile.samples)
        if (const auto delta = s.delta_bytes(); delta != 0) out.emplace_back(&s, delta > 0 ? delta : -delta);
    return out;
}

}  // namespace

std::vector<TreeNode> call_tree(const analysis::StackProfile& profile, analysis::Side side) {
    std::vector<TreeNode> nodes(1);
    std::map<std::pair<std::size_t, std::int64_t>, std::size_t> child;  // (parent, frame) -> node
    const auto descend = [&](std::size_t parent, std::int64_t frame) {
        const auto [at, added] = child.try_emplace({parent, frame}, nodes.size());
        if (added) {
            nodes.push_back({});
            nodes.back().frame = frame;
            nodes[parent].children.push_back(at->second);
        }
        return at->second;
    };
    // Biggest stacks first: when a crafted capture holds more distinct paths than a picture
    // can show, the tree stops growing at kMaxTreeNodes and the rest of a stack's bytes stay
    // with its deepest node already there.
    // A diff's change draws growth and shrinkage alike: a box is as wide as the change through
    // it in either direction, and its colour says which way it went (after - before).
    auto sides =
        profile.differential && side == analysis::Side::delta ? changes(profile) : analysis::sided(profile, side);
    std::stable_sort(sides.begin(), sides.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    const auto step = [&](std::size_t parent, std::int64_t frame) -> std::optional<std::size_t> {
        if (nodes.size() < kMaxTreeNodes) return descend(parent, frame);
        const auto at = child.find({parent, frame});
        if (at == child.end()) return std::nullopt;
        return at->second;
    };
    for (const auto& [sample, value] : sides) {
        std::vector<std::size_t> path{0};
        if (sample->frames_omitted)
            if (const auto n = step(0, -2)) path.push_back(*n);
        for (auto it = sample->frames.rbegin(); it != sample->frames.rend(); ++it) {
            const auto n = step(path.back(), static_cast<std::int64_t>(*it));
            if (!n) break;
            path.push_back(*n);
        }
        for (const auto n : path) {
            auto& node = nodes[n];
            node.value += value;
            node.before += sample->base_bytes;
            node.after += sample->bytes;
            if (value > node.category_value) {
                node.category_value = value;
                node.category = sample->category;
            }
        }
        nodes[path.back()].self += value;
    }
    for (auto& n : nodes)
        std::stable_sort(n.children.begin(), n.children.end(),
                         [&](std::size_t a, std::size_t b) { return nodes[a].value > nodes[b].value; });
    return nodes;
}

}  // namespace memsnap::report::detail
