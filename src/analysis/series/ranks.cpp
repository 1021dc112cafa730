#include "analysis/sites/relative_sites.hpp"

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/series/ranks.hpp>
#include <memsnap/analysis/sites/totals.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/checked.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/steps.hpp>

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

std::int64_t magnitude(std::int64_t v) { return v < 0 ? util::checked_neg(v).value_or(INT64_MAX) : v; }

}  // namespace

namespace {

std::vector<RankCapture> numbered(std::vector<RankCapture> captures, RanksResult& r) {
    if (captures.size() < 2) throw input_error("ranks needs a capture of two ranks or more", "");
    const bool by_device = std::all_of(captures.begin(), captures.end(), [](const RankCapture& c) { return c.device; });
    const bool named =
        std::all_of(captures.begin(), captures.end(), [](const RankCapture& c) { return c.rank.has_value(); });
    r.rank_source = by_device ? "devices" : named ? "file names" : "order given";
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < captures.size(); ++i) {
        if (!named) captures[i].rank = static_cast<std::int64_t>(i);
        if (!seen.insert(*captures[i].rank).second)
            throw usage_error(fmt::format("rank {} is named by two files ({}); give each rank's capture once",
                                          *captures[i].rank, captures[i].file));
    }
    std::sort(captures.begin(), captures.end(),
              [](const RankCapture& a, const RankCapture& b) { return *a.rank < *b.rank; });
    if (!named) r.notes.push_back(Fact(FactKind::ranks_from_order));
    return captures;
}

// Replicas (DDP, DataParallel) hold the same parameters, or equal shards of them (FSDP, ZeRO);
// ranks or devices that hold different parts of a model (pipeline stages, a device_map) do
// not, and are compared as levels only. Parameters tell them apart. Without parameters on any
// rank, the sites do: a replica holds most of its memory at sites the others hold too (an
// outlier adds sites; it does not lose the common ones). Unknown without stacks.
Answer same_workload(const std::vector<RankCapture>& captures) {
    std::vector<std::int64_t> parameters;
    for (const auto& c : captures)
        parameters.push_back(c.info.categories[static_cast<std::size_t>(Category::parameter)].bytes);
    if (std::any_of(parameters.begin(), parameters.end(), [](std::int64_t p) { return p > 0; })) {
        const auto middle = median_of(parameters);
        const auto noise = noise_threshold(ByteRange::exact(middle));
        // DataParallel's primary device (the first) holds the module itself, and whatever the
        // program moved there, beside the replicas' copies: it may hold more, never less.
        bool alike = true;
        for (std::size_t i = 0; i < parameters.size(); ++i) {
            const std::int64_t d = parameters[i] - middle;
            if (magnitude(d) > noise && !(i == 0 && d > 0)) alike = false;
        }
        return alike ? Answer::yes : Answer::no;
    }
    std::vector<std::map<detail::RelativeSite, std::int64_t>> sites(captures.size());
    std::vector<std::int64_t> stacked(captures.size(), 0);
    for (std::size_t i = 0; i < captures.size(); ++i) {
        const auto root = detail::project_root_of(captures[i].info.top_sites);
        for (const auto& u : captures[i].info.top_sites)
            if (u.has_stack) {
                sites[i][detail::relative_site(u, root)] += u.bytes;
                stacked[i] += u.bytes;
            }
        if (util::checked_mul(stacked[i], std::int64_t{2}).value_or(INT64_MAX) <
            captures[i].info.totals.allocated_bytes)
            return Answer::unknown;
    }
    for (std::size_t i = 0; i < captures.size(); ++i) {
        std::int64_t common = 0;  // at sites every other rank holds too
        for (const auto& [key, bytes] : sites[i])
            if (std::all_of(sites.begin(), sites.end(),
                            [&site = key](const auto& other) { return other.count(site) > 0; }))
                common += bytes;
        if (util::checked_mul(common, std::int64_t{2}).value_or(INT64_MAX) < stacked[i]) return Answer::no;
    }
    return Answer::yes;
}

// Warns of what shows the captures are not one job's; true when their code comes from several
// checkouts, which rules out one workload.
bool check_origins(const std::vector<RankCapture>& captures, RanksResult& r) {
    // One job runs one checkout; ranks on other machines keep the same path below it.
    std::set<std::string> roots;
    for (const auto& c : captures)
        if (const auto root = detail::project_root_of(c.info.top_sites); !root.empty()) roots.insert(root);
    std::vector<std::string> checkouts;  // roots nested in another are the same checkout
    for (const auto& root : roots)
        if (std::none_of(roots.begin(), roots.end(),
                         [&](const std::string& other) { return other != root && root.starts_with(other); }))
            checkouts.push_back(root);
    if (checkouts.size() > 1)
        r.warnings.push_back(Fact(FactKind::roots_several)
                                 .count("roots", static_cast<std::int64_t>(checkouts.size()))
                                 .text("list", fmt::format("{}", fmt::join(checkouts, ", "))));
    std::set<std::int64_t> steps;
    for (const auto& c : captures)
        if (const auto s = util::step_from_file_name(c.file)) steps.insert(*s);
    if (steps.size() > 1)
        r.warnings.push_back(Fact(FactKind::step_differs).text("steps", fmt::format("{}", fmt::join(steps, ", "))));
    for (const auto& c : captures)
        if (!c.device && c.info.devices.size() > 1) {
            std::vector<int> ids;
            for (const auto& d : c.info.devices) ids.push_back(d.device);
            r.warnings.push_back(Fact(FactKind::device_per_rank)
                                     .text("file", c.file)
                                     .text("devices", fmt::format("{}", fmt::join(ids, ", "))));
        }
    return checkouts.size() > 1;
}

constexpr std::size_t kRanksForSpread = 5;

void medians(const std::vector<RankCapture>& captures, RanksResult& r) {
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
    // ranks spread more than that on their own (uneven batches); saturated, so that no rank's
    // figure can overflow it.
    // The deviation of fewer than five ranks is no robust spread: with three, the band of three
    // deviations is wider than the data, and nothing could stand out.
    r.noise_bytes = noise_threshold(ByteRange::exact(r.median.allocated_bytes));
    if (captures.size() < kRanksForSpread) return;
    std::vector<std::int64_t> deviations;
    for (const auto a : allocated) deviations.push_back(magnitude(a - r.median.allocated_bytes));
    const auto nine = util::checked_mul(median_of(deviations), std::int64_t{9});
    const std::int64_t mad = nine ? *nine / 2 : INT64_MAX;
    r.noise_bytes = std::max(r.noise_bytes, mad);
}

using SitesByKey = std::map<detail::RelativeSite, const SiteUsage*>;

// The levels a rank is judged by: its snapshot's, or those of its out-of-memory moment.
struct RankLevels {
    std::int64_t allocated_bytes = 0, reserved_bytes = 0;
    const std::array<CategoryUsage, category_count>* categories = nullptr;
    const SitesByKey* sites = nullptr;
};

RankOutlier outlier(const RankCapture& c, const RankLevels& levels, std::int64_t delta, const RanksResult& r,
                    const RankCapture& median_rank, const SitesByKey& any_site,
                    const std::map<detail::RelativeSite, std::int64_t>& site_median) {
    RankOutlier o;
    o.rank = *c.rank;
    o.file = c.file;
    // Less live memory but a cache far above the median's is no shrink: its cache grew (the
    // device that ran out of memory reserves the most).
    const std::int64_t reserved_delta = levels.reserved_bytes - r.median.reserved_bytes;
    const bool cache_above = reserved_delta > noise_threshold(ByteRange::exact(r.median.reserved_bytes));
    o.verdict = delta > 0 ? Verdict::growth : cache_above ? Verdict::cache_growth : Verdict::shrink;
    o.allocated_bytes = levels.allocated_bytes;
    o.delta_bytes = delta;
    o.ooms = c.info.oom_events;
    o.device = c.device;
    o.snapshot_allocated_bytes = c.info.totals.allocated_bytes;
    o.trace_first_us = c.info.trace_first_us;
    if (c.oom_moment) o.oom_moment = c.oom_moment;
    const auto add_site = [&](const detail::RelativeSite& key, std::int64_t median) {
        const auto at = levels.sites->find(key);
        const std::int64_t bytes = at == levels.sites->end() ? 0 : at->second->bytes;
        if (bytes == median) return;
        const SiteUsage& u = at == levels.sites->end() ? *any_site.at(key) : *at->second;
        o.sites.push_back({u.site, u.category, bytes, median, bytes - median});
    };
    for (const auto& [key, median] : site_median) add_site(key, median);
    // Sites of its out-of-memory moment that no snapshot holds.
    for (const auto& [key, u] : *levels.sites)
        if (!site_median.contains(key)) add_site(key, 0);
    std::sort(o.sites.begin(), o.sites.end(), [](const SiteDelta& a, const SiteDelta& b) {
        if (magnitude(a.delta_bytes) != magnitude(b.delta_bytes))
            return magnitude(a.delta_bytes) > magnitude(b.delta_bytes);
        return a.site < b.site;
    });
    if (o.sites.size() > kOutlierSites) o.sites.resize(kOutlierSites);
    // Against the median rank's categories, not each category's median: the differences add up
    // to the rank's own (a DataParallel primary's parameters show, as its replicas lack them).
    for (std::size_t k = 0; k < category_count; ++k) {
        const std::int64_t d = (*levels.categories)[k].bytes - median_rank.info.categories[k].bytes;
        if (d != 0) o.categories.emplace_back(static_cast<Category>(k), d);
    }
    std::sort(o.categories.begin(), o.categories.end(),
              [](const auto& a, const auto& b) { return magnitude(a.second) > magnitude(b.second); });
    return o;
}

SitesByKey sites_by_key(const std::vector<SiteUsage>& sites) {
    SitesByKey out;
    const auto root = detail::project_root_of(sites);
    for (const auto& u : sites) out[detail::relative_site(u, root)] = &u;
    return out;
}

}  // namespace

RanksResult compare_ranks(std::vector<RankCapture> input, const AnalysisOptions& options) {
    RanksResult r;
    const auto captures = numbered(std::move(input), r);
    const bool several_checkouts = check_origins(captures, r);
    r.same_workload = several_checkouts ? Answer::no : same_workload(captures);
    const bool devices = captures.front().device.has_value();
    if (devices)
        r.notes.push_back(
            Fact(FactKind::devices_as_ranks).count("devices", static_cast<std::int64_t>(captures.size())));
    if (r.same_workload == Answer::no)
        r.notes.push_back(Fact(FactKind::devices_hold_parts)
                              .count("devices", static_cast<std::int64_t>(captures.size()))
                              .text("kind", devices ? "devices" : "ranks"));
    // Each rank's sites by their path below its own project root: ranks on other machines
    // or checkouts share sites.
    std::vector<SitesByKey> by_site;
    SitesByKey any_site;
    for (const auto& c : captures) {
        by_site.push_back(sites_by_key(c.info.top_sites));
        any_site.insert(by_site.back().begin(), by_site.back().end());
    }
    medians(captures, r);
    // An out-of-memory error is the first thing to say of a rank, whatever its level.
    for (const auto& c : captures)
        if (c.info.oom_events > 0) {
            auto fact = Fact(FactKind::rank_ooms)
                            .count("rank", *c.rank)
                            .count("ooms", c.info.oom_events)
                            .count("device", c.device.value_or(-1));
            if (c.oom_moment) fact.bytes("held", c.oom_moment->allocated_bytes);
            r.warnings.push_back(std::move(fact));
        }
    std::map<detail::RelativeSite, std::int64_t> site_median;
    for (const auto& [key, u] : any_site) {
        std::vector<std::int64_t> bytes;
        for (const auto& ranks_sites : by_site) {
            const auto at = ranks_sites.find(key);
            bytes.push_back(at == ranks_sites.end() ? 0 : at->second->bytes);
        }
        site_median[key] = median_of(bytes);
    }
    // The rank at the median of allocated memory (an observed one: median_of takes the lower
    // middle).
    const auto& median_rank = *std::find_if(captures.begin(), captures.end(), [&](const RankCapture& c) {
        return c.info.totals.allocated_bytes == r.median.allocated_bytes;
    });
    r.median_rank = *median_rank.rank;
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
        // A rank that ran out of memory is judged by what it held then: its snapshot holds what
        // the error left (the failed step's tensors freed into its cache).
        RankLevels levels{c.info.totals.allocated_bytes, c.info.totals.reserved_bytes, &c.info.categories, &by_site[i]};
        SitesByKey moment_sites;
        if (c.oom_moment) {
            moment_sites = sites_by_key(c.oom_moment->sites);
            levels = {c.oom_moment->allocated_bytes, c.oom_moment->reserved_bytes, &c.oom_moment->categories,
                      &moment_sites};
        }
        const std::int64_t delta = levels.allocated_bytes - r.median.allocated_bytes;
        // A rank stands out only among replicas shown to run one workload.
        if (magnitude(delta) <= r.noise_bytes || r.same_workload != Answer::yes) continue;
        r.outliers.push_back(outlier(c, levels, delta, r, median_rank, any_site, site_median));
    }
    // A rank that ran out of memory first, whatever its levels: what filled it is the question.
    std::stable_sort(r.outliers.begin(), r.outliers.end(), [](const RankOutlier& a, const RankOutlier& b) {
        if ((a.ooms > 0) != (b.ooms > 0)) return a.ooms > 0;
        return magnitude(a.delta_bytes) > magnitude(b.delta_bytes);
    });
    if (r.outliers.empty() && r.same_workload == Answer::yes)
        r.notes.push_back(Fact(FactKind::ranks_within_noise).bytes("noise", r.noise_bytes));
    return r;
}

std::optional<RankOomMoment> rank_oom_moment(const snapshot::Snapshot& snap, std::optional<int> device,
                                             const AnalysisOptions& options) {
    auto every_site = options;
    every_site.device = device;
    every_site.top = 0;
    auto report = explain_ooms(snap, every_site);
    if (report.ooms.empty()) return std::nullopt;
    // The last explained: the error that ended the step (earlier ones may have been retried).
    const auto& oom = report.ooms.back();
    RankOomMoment m;
    m.device = oom.device;
    m.event = oom.event;
    m.time_us = oom.time_us;
    m.allocated_bytes = oom.allocated_bytes;
    m.reserved_bytes = oom.reserved_bytes;
    for (std::size_t k = 0; k < category_count; ++k) m.categories[k].bytes = oom.usage.category_bytes[k];
    for (const auto& s : oom.usage.sites) m.sites.push_back({s.site, s.category, s.bytes, s.allocations, s.has_stack});
    return m;
}

std::vector<RankCapture> devices_as_ranks(const snapshot::Snapshot& snap, const std::string& file,
                                          const AnalysisOptions& options) {
    std::vector<RankCapture> out;
    for (const int device : devices_of(snap)) {
        auto one = options;
        one.device = device;
        one.top = 0;
        auto info = describe_snapshot(snap, one);
        auto moment = info.oom_events > 0 ? rank_oom_moment(snap, device, options) : std::nullopt;
        out.push_back({device, file, std::move(info), device, std::move(moment)});
    }
    return out;
}

StackProfile ranks_stacks(const RanksResult& ranks) {
    StackProfile out;
    out.subject = {ProfileSubject::Kind::ranks, {}, {}, 0, ranks.ranks.size()};
    out.measure = "live bytes";
    for (const auto& r : ranks.ranks) {
        const auto rank_frame = static_cast<std::uint32_t>(out.frame_table.size());
        // Counted with the Python frames: pictures keep it whatever --cpp-frames says.
        out.frame_table.push_back({r.file, 0, fmt::format("rank {}", r.rank), true});
        for (const auto& s : r.top_sites) {
            ProfileSample sample;
            sample.frames = {static_cast<std::uint32_t>(out.frame_table.size()), rank_frame};  // innermost first
            out.frame_table.push_back({s.site.filename, s.site.line, s.site.name, true, s.site.user_code});
            sample.category = s.category;
            sample.bytes = s.bytes;
            sample.count = s.blocks;
            out.samples.push_back(std::move(sample));
        }
    }
    return out;
}

}  // namespace memsnap::analysis
