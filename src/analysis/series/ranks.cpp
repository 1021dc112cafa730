#include "analysis/sites/relative_sites.hpp"

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace memsnap::analysis {

namespace {

constexpr std::size_t kOutlierSites = 10;

// The median of `values` (the lower middle for an even count: an observed value).
std::int64_t median_of(std::vector<std::int64_t> values) {
    if (values.empty()) return 0;
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

std::int64_t magnitude(std::int64_t v) { return v < 0 ? (v == INT64_MIN ? INT64_MAX : -v) : v; }

}  // namespace

RanksResult compare_ranks(std::vector<RankCapture> captures, const AnalysisOptions& options) {
    if (captures.size() < 2) throw input_error("ranks needs a capture of two ranks or more", "");
    RanksResult r;
    const bool named =
        std::all_of(captures.begin(), captures.end(), [](const RankCapture& c) { return c.rank.has_value(); });
    r.rank_source = named ? "file names" : "order given";
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < captures.size(); ++i) {
        if (!named) captures[i].rank = static_cast<std::int64_t>(i);
        if (!seen.insert(*captures[i].rank).second)
            throw usage_error(fmt::format("rank {} is named by two files ({}); give each rank's capture once",
                                          *captures[i].rank, captures[i].file));
    }
    std::sort(captures.begin(), captures.end(),
              [](const RankCapture& a, const RankCapture& b) { return *a.rank < *b.rank; });

    // Each rank's sites by their path below its own project root: ranks on other machines
    // or checkouts share sites.
    std::vector<std::map<detail::RelativeSite, const SiteUsage*>> by_site(captures.size());
    std::map<detail::RelativeSite, const SiteUsage*> any_site;
    std::set<std::string> roots;
    for (std::size_t i = 0; i < captures.size(); ++i) {
        const auto root = detail::project_root_of(captures[i].info.top_sites);
        if (!root.empty()) roots.insert(root);
        for (const auto& u : captures[i].info.top_sites) {
            const auto key = detail::relative_site(u, root);
            by_site[i][key] = &u;
            any_site.try_emplace(key, &u);
        }
    }
    std::vector<std::int64_t> allocated, reserved, active, split;
    std::array<std::vector<std::int64_t>, category_count> categories;
    for (const auto& c : captures) {
        allocated.push_back(c.info.totals.allocated_bytes);
        reserved.push_back(c.info.totals.reserved_bytes);
        active.push_back(c.info.totals.active_bytes);
        split.push_back(c.info.totals.inactive_split_bytes);
        for (std::size_t k = 0; k < category_count; ++k) categories[k].push_back(c.info.categories[k].bytes);
    }
    r.median.allocated_bytes = median_of(allocated);
    r.median.reserved_bytes = median_of(reserved);
    r.median.active_bytes = median_of(active);
    r.median.inactive_split_bytes = median_of(split);
    for (std::size_t k = 0; k < category_count; ++k) r.median.category_bytes[k] = median_of(categories[k]);
    // The noise: the allocator's floor, or three scaled median absolute deviations when the
    // ranks spread more than that on their own (uneven batches, pipeline stages).
    std::vector<std::int64_t> deviations;
    for (const auto a : allocated) deviations.push_back(magnitude(a - r.median.allocated_bytes));
    const std::int64_t mad = median_of(deviations);
    r.noise_bytes = std::max(noise_threshold(ByteRange::exact(r.median.allocated_bytes)), mad * 3 * 3 / 2);

    std::map<detail::RelativeSite, std::int64_t> site_median;
    for (const auto& [key, u] : any_site) {
        std::vector<std::int64_t> bytes;
        for (const auto& ranks_sites : by_site) {
            const auto at = ranks_sites.find(key);
            bytes.push_back(at == ranks_sites.end() ? 0 : at->second->bytes);
        }
        site_median[key] = median_of(bytes);
    }

    for (std::size_t i = 0; i < captures.size(); ++i) {
        const auto& c = captures[i];
        RankSummary s;
        s.rank = *c.rank;
        s.file = c.file;
        s.totals = c.info.totals;
        s.categories = c.info.categories;
        s.top_sites = c.info.top_sites;
        if (options.top != 0 && s.top_sites.size() > options.top) s.top_sites.resize(options.top);
        r.ranks.push_back(std::move(s));

        const std::int64_t delta = c.info.totals.allocated_bytes - r.median.allocated_bytes;
        if (magnitude(delta) <= r.noise_bytes) continue;
        RankOutlier o;
        o.rank = *c.rank;
        o.file = c.file;
        o.allocated_bytes = c.info.totals.allocated_bytes;
        o.delta_bytes = delta;
        for (const auto& [key, median] : site_median) {
            const auto at = by_site[i].find(key);
            const std::int64_t bytes = at == by_site[i].end() ? 0 : at->second->bytes;
            if (bytes == median) continue;
            const SiteUsage& u = at == by_site[i].end() ? *any_site.at(key) : *at->second;
            o.sites.push_back({u.site, u.category, bytes, median, bytes - median});
        }
        std::sort(o.sites.begin(), o.sites.end(), [](const SiteDelta& a, const SiteDelta& b) {
            if (magnitude(a.delta_bytes) != magnitude(b.delta_bytes))
                return magnitude(a.delta_bytes) > magnitude(b.delta_bytes);
            return a.site < b.site;
        });
        if (o.sites.size() > kOutlierSites) o.sites.resize(kOutlierSites);
        for (std::size_t k = 0; k < category_count; ++k) {
            const std::int64_t d = c.info.categories[k].bytes - r.median.category_bytes[k];
            if (d != 0) o.categories.emplace_back(static_cast<Category>(k), d);
        }
        std::sort(o.categories.begin(), o.categories.end(),
                  [](const auto& a, const auto& b) { return magnitude(a.second) > magnitude(b.second); });
        r.outliers.push_back(std::move(o));
    }
    std::stable_sort(r.outliers.begin(), r.outliers.end(), [](const RankOutlier& a, const RankOutlier& b) {
        return magnitude(a.delta_bytes) > magnitude(b.delta_bytes);
    });
    // One job runs one checkout; ranks on other machines keep the same path below it, so
    // different roots mean the files are not one job's ranks.
    if (roots.size() > 1)
        r.warnings.push_back(
            fmt::format("the captures come from {} different project roots ({}): they may not be the "
                        "ranks of one job",
                        roots.size(), fmt::join(roots, ", ")));
    if (!named)
        r.notes.push_back("the file names carry no rank (rank3, rank_3, -r3): ranks are numbered in the order given");
    if (r.outliers.empty())
        r.notes.push_back(fmt::format("every rank is within {} of the median rank's allocated memory",
                                      util::human_bytes(r.noise_bytes)));
    return r;
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

}  // namespace memsnap::analysis
