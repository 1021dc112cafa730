#include <memsnap/analysis/rank.hpp>

#include <algorithm>
#include <cstdlib>

namespace memsnap::analysis {

RepresentativeStack representative(const GroupKey& key, const GroupCounts& counts, const StackIndex& index) {
    RepresentativeStack rs;
    rs.size = key.size;
    rs.delta_blocks = counts.after - counts.before;
    rs.delta_bytes = rs.delta_blocks * key.size;
    rs.category = counts.category;
    for (auto f : index.frames(key.stack)) rs.frames.push_back(index.frame(f));
    return rs;
}

RankedSites rank_sites(std::vector<SiteGroups> sites, const StackIndex& index, bool stacks_recorded) {
    std::sort(sites.begin(), sites.end(), [](const SiteGroups& a, const SiteGroups& b) {
        const auto& x = a.change;
        const auto& y = b.change;
        if (x.growth_bytes_per_step != y.growth_bytes_per_step)
            return x.growth_bytes_per_step > y.growth_bytes_per_step;
        if (x.after_bytes != y.after_bytes) return x.after_bytes > y.after_bytes;
        return x.site < y.site;
    });
    RankedSites out;
    for (std::size_t r = 0; r < sites.size(); ++r) {
        auto& s = sites[r];
        s.change.rank = r + 1;
        // The biggest changes first, ties by stack then size.
        std::sort(s.groups.begin(), s.groups.end(), [](const auto& a, const auto& b) {
            const std::int64_t da = std::llabs((a.second.after - a.second.before) * a.first.size);
            const std::int64_t db = std::llabs((b.second.after - b.second.before) * b.first.size);
            if (da != db) return da > db;
            return a.first < b.first;
        });
        if (!stacks_recorded) continue;
        for (const auto& [key, counts] : s.groups) {
            const bool changed = counts.after != counts.before;
            if (s.change.stacks.size() < 3) s.change.stacks.push_back(representative(key, counts, index));
            if (changed) out.changed_stacks.push_back(representative(key, counts, index));
        }
    }
    out.sites = std::move(sites);
    return out;
}

}  // namespace memsnap::analysis
