#include <memsnap/analysis/diff/group_sites.hpp>
#include <memsnap/util/hash.hpp>
#include <memsnap/util/permute.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace memsnap::analysis {

double per_step(std::int64_t delta, const util::Steps& steps) {
    return steps.known() ? static_cast<double>(delta) / static_cast<double>(steps.distance())
                         : static_cast<double>(delta);
}

std::vector<StackGrowth> grown_stacks(const SiteGroups& site) {
    std::vector<StackGrowth> out;
    for (const auto& [key, counts] : site.groups)
        if (counts.after > counts.before)
            out.push_back({key.stack, (counts.after - counts.before) * key.size, counts.after - counts.before});
    std::sort(out.begin(), out.end(), [](const StackGrowth& a, const StackGrowth& b) { return a.stack < b.stack; });
    std::vector<StackGrowth> merged;
    for (const auto& g : out) {
        if (!merged.empty() && merged.back().stack == g.stack) {
            merged.back().bytes += g.bytes;
            merged.back().blocks += g.blocks;
        } else {
            merged.push_back(g);
        }
    }
    return merged;
}

namespace {

struct TokenHash {
    std::size_t operator()(const std::pair<std::uint64_t, Category>& token) const {
        return util::mix_hash(util::mix_hash(util::hash_seed(), token.first), static_cast<std::uint64_t>(token.second));
    }
};

}  // namespace

std::vector<SiteGroups> group_sites(const BlockMatch& match, const StackIndex& index, const util::Steps& steps) {
    // Grouped by number first (the site's token, or the block size without stacks), so that
    // each site's name is built once however many groups it has.
    const auto token = [&](const GroupKey& key) {
        return std::pair(site_token(index, key.stack, key.size), key.category);
    };
    std::unordered_map<std::pair<std::uint64_t, Category>, std::size_t, TokenHash> position;
    position.reserve(match.groups.size());
    std::vector<std::size_t> site_of_group;
    site_of_group.reserve(match.groups.size());
    for (const auto& group : match.groups)
        site_of_group.push_back(position.try_emplace(token(group.first), position.size()).first->second);
    std::vector<SiteGroups> out(position.size());
    std::vector<bool> named(out.size(), false);
    for (std::size_t i = 0; i < match.groups.size(); ++i) {
        const auto& [key, counts] = match.groups[i];
        const std::size_t at = site_of_group[i];
        auto& s = out[at];
        if (!named[at]) {
            s.change.site = site_key(index, key.stack, key.size, key.category);
            s.change.has_stack = !without_stack(key.stack);
            named[at] = true;
        }
        if (match.several_devices) {
            auto it = std::find_if(s.by_device.begin(), s.by_device.end(),
                                   [device = key.device](const DeviceSiteCounts& d) { return d.device == device; });
            if (it == s.by_device.end()) it = s.by_device.insert(s.by_device.end(), {key.device});
            it->before_blocks += counts.before;
            it->after_blocks += counts.after;
            it->before_bytes += counts.before * key.size;
            it->after_bytes += counts.after * key.size;
        }
        auto& c = s.change;
        c.before_blocks += counts.before;
        c.after_blocks += counts.after;
        c.before_bytes += counts.before * key.size;
        c.after_bytes += counts.after * key.size;
        c.survivor_blocks += counts.survivors;
        c.gone_blocks += counts.before - counts.survivors;
        c.new_blocks += counts.after - counts.survivors;
        // One (stack, size) on several devices is one group: the match's keys are adjacent.
        GroupKey merged = key;
        merged.device = 0;
        if (!s.groups.empty() && s.groups.back().first == merged) {
            auto& g = s.groups.back().second;
            g.before += counts.before;
            g.after += counts.after;
            g.survivors += counts.survivors;
        } else {
            s.groups.emplace_back(merged, counts);
        }
    }
    for (auto& s : out) {
        auto& c = s.change;
        c.delta_bytes = c.after_bytes - c.before_bytes;
        c.delta_blocks = c.after_blocks - c.before_blocks;
        c.growth_bytes_per_step = per_step(c.delta_bytes, steps);
        c.category = c.site.category;
    }
    // Sorted through an index: a SiteGroups is a few hundred bytes to move, a hundred thousand
    // sites make 1.7 million comparisons.
    std::vector<std::uint32_t> order(out.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return out[a].change.site < out[b].change.site; });
    util::permute(out, order);
    return out;
}

}  // namespace memsnap::analysis
