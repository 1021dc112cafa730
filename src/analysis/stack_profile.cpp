#include <memsnap/analysis/match_blocks.hpp>
#include <memsnap/analysis/rank.hpp>
#include <memsnap/analysis/ranks.hpp>
#include <memsnap/analysis/stack_profile.hpp>
#include <memsnap/analysis/totals.hpp>
#include <memsnap/analysis/trend.hpp>

#include <fmt/format.h>

#include <map>

namespace memsnap::analysis {

StackProfile live_stacks(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    require_device(snap, options.device);
    StackProfile out;
    out.title = fmt::format("live memory of {}", snap.source.path);
    out.measure = "live bytes";
    StackIndex index({&snap}, options.rules, options.stacks);
    const auto blocks = collect_blocks(snap, 0, index, options.device);
    StackTotals by_stack;
    for (const auto& b : blocks.live) {
        auto& s = by_stack[{b.stack, b.category}];
        s.first += b.size;
        ++s.second;
    }
    add_samples(out, index, by_stack);
    return out;
}

void add_samples(StackProfile& out, const StackIndex& index, const StackTotals& totals) {
    FrameTableBuilder frames(index, out.frame_table);
    for (const auto& [key, value] : totals) {
        RepresentativeStack rs;
        frames.add_frames(key.first, rs);
        ProfileSample sample;
        sample.frames = std::move(rs.frames);
        sample.frames_omitted = rs.frames_omitted;
        sample.category = key.second;
        sample.bytes = value.first;
        sample.count = value.second;
        out.samples.push_back(std::move(sample));
    }
}

StackProfile diff_stacks(const SnapshotDiff& diff) {
    StackProfile out;
    out.title = fmt::format("{} → {}", diff.before_file, diff.after_file);
    out.measure = "bytes";
    out.differential = true;
    out.frame_table = diff.frame_table;
    out.samples = diff.stack_samples;
    return out;
}

StackProfile trend_stacks(const TrendResult& trend) {
    StackProfile out;
    out.title = fmt::format("sites over {} captures", trend.steps.size());
    out.measure = "bytes";
    out.differential = true;
    const std::size_t first = std::min(trend.warmup, trend.steps.empty() ? 0 : trend.steps.size() - 1);
    for (const auto& s : trend.sites) {
        ProfileSample sample;
        sample.frames.push_back(static_cast<std::uint32_t>(out.frame_table.size()));
        out.frame_table.push_back({s.site.filename, s.site.line, s.site.name, true});
        sample.category = s.category;
        sample.base_bytes = s.bytes_by_step[first];
        sample.base_count = s.blocks_by_step[first];
        sample.bytes = s.bytes_by_step.back();
        sample.count = s.blocks_by_step.back();
        out.samples.push_back(std::move(sample));
    }
    return out;
}

StackProfile ranks_stacks(const RanksResult& ranks) {
    StackProfile out;
    out.title = fmt::format("live memory of {} ranks", ranks.ranks.size());
    out.measure = "live bytes";
    for (const auto& r : ranks.ranks) {
        const auto rank_frame = static_cast<std::uint32_t>(out.frame_table.size());
        out.frame_table.push_back({r.file, 0, fmt::format("rank {}", r.rank), false});
        for (const auto& s : r.top_sites) {
            ProfileSample sample;
            sample.frames = {static_cast<std::uint32_t>(out.frame_table.size()), rank_frame};  // innermost first
            out.frame_table.push_back({s.site.filename, s.site.line, s.site.name, true});
            sample.category = s.category;
            sample.bytes = s.bytes;
            sample.count = s.blocks;
            out.samples.push_back(std::move(sample));
        }
    }
    return out;
}

std::vector<std::pair<const ProfileSample*, std::int64_t>> sided(const StackProfile& profile, Side side) {
    std::vector<std::pair<const ProfileSample*, std::int64_t>> out;
    for (const auto& s : profile.samples) {
        const std::int64_t value = !profile.differential  ? s.bytes
                                   : side == Side::before ? s.base_bytes
                                   : side == Side::after  ? s.bytes
                                                          : s.delta_bytes();
        if (value > 0) out.emplace_back(&s, value);
    }
    return out;
}

}  // namespace memsnap::analysis
