#include <memsnap/analysis/group_sites.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace memsnap::analysis {

double per_step(std::int64_t delta, const util::Steps& steps) {
    return steps.known() ? static_cast<double>(delta) / static_cast<double>(steps.distance())
                         : static_cast<double>(delta);
}


SiteKey site_key(const StackIndex& index, const GroupKey& group, bool stacks_recorded) {
    SiteKey site;
    if (stacks_recorded) site = index.site(group.stack);
    else site.name = fmt::format("<no stack: {}-byte blocks>", group.size);
    site.category = group.category;
    return site;
}

std::vector<SiteGroups> group_sites(const BlockMatch& match, const StackIndex& index, bool stacks_recorded,
                                    const util::Steps& steps) {
    std::map<SiteKey, SiteGroups> sites;
    for (const auto& [key, counts] : match.groups) {
        const SiteKey site = site_key(index, key, stacks_recorded);
        auto& s = sites[site];
        auto& c = s.change;
        c.site = site;
        c.before_blocks += counts.before;
        c.after_blocks += counts.after;
        c.before_bytes += counts.before * key.size;
        c.after_bytes += counts.after * key.size;
        c.survivor_blocks += counts.survivors;
        c.gone_blocks += counts.before - counts.survivors;
        c.new_blocks += counts.after - counts.survivors;
        s.groups.emplace_back(key, counts);
    }
    std::vector<SiteGroups> out;
    out.reserve(sites.size());
    for (auto& [key, s] : sites) {
        auto& c = s.change;
        c.delta_bytes = c.after_bytes - c.before_bytes;
        c.delta_blocks = c.after_blocks - c.before_blocks;
        c.growth_bytes_per_step = per_step(c.delta_bytes, steps);
        c.category = key.category;
        out.push_back(std::move(s));
    }
    return out;
}

}  // namespace memsnap::analysis
