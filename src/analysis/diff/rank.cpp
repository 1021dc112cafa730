#include <memsnap/analysis/diff/rank.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>

namespace memsnap::analysis {

namespace {

// The biggest changes first, ties by stack then size.
void order_groups(std::vector<std::pair<GroupKey, GroupCounts>>& groups) {
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
        const std::int64_t da = std::llabs((a.second.after - a.second.before) * a.first.size);
        const std::int64_t db = std::llabs((b.second.after - b.second.before) * b.first.size);
        if (da != db) return da > db;
        return a.first < b.first;
    });
}

}  // namespace

RankedSites rank_sites(std::vector<SiteGroups> sites, const std::vector<SiteJudgement>& judged,
                       const SiteDiagnoser& diagnose, const StackIndex& index, bool stacks_recorded,
                       const SiteSelection& selection) {
    std::vector<std::size_t> order(sites.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    // Leak sites first; then by the size of the change, growth and shrinkage alike, so that
    // --top keeps the biggest; ties by the site.
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const bool leak_a = judged[a].verdict == Verdict::leak, leak_b = judged[b].verdict == Verdict::leak;
        if (leak_a != leak_b) return leak_a;
        const auto& x = sites[a].change;
        const auto& y = sites[b].change;
        const double mx = std::abs(x.growth_bytes_per_step), my = std::abs(y.growth_bytes_per_step);
        if (mx != my) return mx > my;
        if (x.growth_bytes_per_step != y.growth_bytes_per_step)
            return x.growth_bytes_per_step > y.growth_bytes_per_step;
        if (x.after_bytes != y.after_bytes) return x.after_bytes > y.after_bytes;
        return x.site < y.site;
    });
    RankedSites out;
    out.total = sites.size();
    FrameTableBuilder table(index, out.frame_table);
    std::optional<std::size_t> fastest;  // rank position; the first of equals
    for (std::size_t r = 0; r < order.size(); ++r) {
        const double growth = sites[order[r]].change.growth_bytes_per_step;
        if (!fastest || growth > sites[order[*fastest]].change.growth_bytes_per_step) fastest = r;
    }
    // Built out in full: verdict, diagnosis, the three biggest stacks.
    const auto complete = [&](std::size_t r, bool move) {
        auto& s = sites[order[r]];
        const auto& j = judged[order[r]];
        SiteChange change;
        change.diagnosis = diagnose(s, j);
        static_cast<SiteCounts&>(change) = move ? std::move(s.change) : s.change;
        change.rank = r + 1;
        change.verdict = j.verdict;
        change.reason = j.reason;
        change.share = j.share;
        if (stacks_recorded && change.has_stack)
            for (std::size_t g = 0; g < s.groups.size(); ++g) {
                const auto& [key, counts] = s.groups[g];
                const std::int64_t delta_blocks = counts.after - counts.before;
                if (g >= 3) {
                    if (delta_blocks != 0) change.stacks_not_shown.add(delta_blocks, delta_blocks * key.size);
                    continue;
                }
                RepresentativeStack rs;
                rs.size = key.size;
                rs.delta_blocks = delta_blocks;
                rs.delta_bytes = delta_blocks * key.size;
                rs.category = key.category;
                // The frames of the side that holds more of it, as that side recorded them.
                table.add_recorded_frames(counts.after >= counts.before ? 1 : 0, key.stack, rs);
                change.stacks.push_back(std::move(rs));
            }
        return change;
    };
    for (std::size_t r = 0; r < order.size(); ++r) {
        auto& s = sites[order[r]];
        if (stacks_recorded && selection.stack_samples != StackSamples::none) {
            // Each stack once, its block sizes added up.
            std::map<CanonStackId, ProfileSample> by_stack;
            for (const auto& [key, counts] : s.groups) {
                auto& sample = by_stack[key.stack];
                sample.category = s.change.category;
                sample.base_bytes += counts.before * key.size;
                sample.base_count += counts.before;
                sample.bytes += counts.after * key.size;
                sample.count += counts.after;
            }
            for (auto& [stack, sample] : by_stack) {
                if (selection.stack_samples == StackSamples::changed && sample.bytes == sample.base_bytes) continue;
                RepresentativeStack rs;
                table.add_frames(stack, rs);
                sample.frames = std::move(rs.frames);
                sample.frames_omitted = rs.frames_omitted;
                out.stack_samples.push_back(std::move(sample));
            }
        }
        order_groups(s.groups);
        if (fastest == r) out.fastest = complete(r, false);
        const bool below = std::llabs(s.change.delta_bytes) < selection.min_growth;
        const bool beyond = !below && selection.top != 0 && out.sites.size() >= selection.top;
        if (below) ++out.below_min_growth;
        if (beyond) ++out.beyond_top;
        if (below || beyond)
            out.not_listed_delta_bytes += s.change.delta_bytes;
        else
            out.sites.push_back(complete(r, true));
        // Done with: its memory goes to what is built from it (a diff may hold a million sites).
        s.groups = {};
        s.by_device = {};
    }
    return out;
}

}  // namespace memsnap::analysis
