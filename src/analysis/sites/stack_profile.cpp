#include <memsnap/analysis/sites/live_blocks.hpp>
#include <memsnap/analysis/sites/stack_profile.hpp>
#include <memsnap/analysis/sites/totals.hpp>

#include <fmt/format.h>

#include <map>

namespace memsnap::analysis {

StackProfile live_stacks(const snapshot::Snapshot& snap, const AnalysisOptions& options) {
    require_device(snap, options.device);
    StackProfile out;
    out.subject = {ProfileSubject::Kind::live, snap.source.path, {}, 0, 0};
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
