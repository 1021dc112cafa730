#include "analysis/sites/relative_sites.hpp"

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/series/trend.hpp>
#include <memsnap/analysis/sites/stats_tables.hpp>
#include <memsnap/error.hpp>
#include <memsnap/util/format.hpp>
#include <memsnap/util/steps.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

namespace memsnap::analysis {

namespace {

constexpr std::size_t kMaxTrendSitesListed = 1000;

// A fit needs two intervals after warm-up to tell steady growth from one jump.
constexpr std::size_t kMinPoints = 3;

std::int64_t series_noise(const std::vector<std::int64_t>& bytes) {
    const auto top = bytes.empty() ? 0 : *std::max_element(bytes.begin(), bytes.end());
    return noise_threshold(ByteRange::exact(top));
}

std::string verdict_of(const std::vector<std::int64_t>& d, const std::vector<std::int64_t>* blocks, std::size_t from,
                       double r2, std::int64_t noise) {
    std::size_t ups = 0, downs = 0;
    std::int64_t up_sum = 0, down_sum = 0, max_up = 0;
    for (const auto delta : d) {
        if (delta > noise) {
            ++ups;
            up_sum += delta;
            max_up = std::max(max_up, delta);
        } else if (delta < -noise) {
            ++downs;
            down_sum -= delta;
        }
    }
    if (ups == 0 && downs == 0) return "stable";
    if (ups == 0) return "shrinking";
    // Frees that take back a quarter of the growth or more: memory that comes and goes.
    if (downs > 0 && down_sum * 4 >= up_sum) return "sawtooth";
    if (blocks && blocks->size() > from &&
        std::all_of(blocks->begin() + static_cast<std::ptrdiff_t>(from), blocks->end(),
                    [&](std::int64_t b) { return b == (*blocks)[from]; }))
        return "shape_growth";
    if (ups == 1 || max_up * 5 >= up_sum * 4) return "one_time";                  // one interval holds 80% or more
    const std::size_t steady = std::max<std::size_t>(2, (d.size() * 3 + 4) / 5);  // 60% of the intervals
    if (ups >= steady && r2 >= 0.8) return "leak";
    return "irregular";
}

struct Ranked {
    SiteKey site;
    Category category = Category::unknown;
};

// Steps of the captures, or their positions, and where they came from.
struct StepChoice {
    std::vector<std::int64_t> steps;
    std::vector<std::size_t> order;  // capture positions in step order
    std::string source;
    bool known = false;
};

StepChoice choose_steps(std::size_t n, const std::vector<std::optional<std::int64_t>>& found,
                        const std::string& found_source, const std::vector<std::optional<std::int64_t>>& times,
                        const TrendOptions& trend) {
    StepChoice c;
    c.order.resize(n);
    std::iota(c.order.begin(), c.order.end(), std::size_t{0});
    if (!trend.steps.empty()) {
        if (trend.steps.size() != n)
            throw usage_error(fmt::format("--steps: {} steps for {} captures", trend.steps.size(), n));
        c.steps = trend.steps;
        c.source = "--steps";
        c.known = true;
        return c;
    }
    const auto all_distinct = [&](const std::vector<std::optional<std::int64_t>>& v) {
        std::set<std::int64_t> seen;
        for (const auto& x : v)
            if (!x || !seen.insert(*x).second) return false;
        return true;
    };
    if (all_distinct(found)) {
        std::stable_sort(c.order.begin(), c.order.end(),
                         [&](std::size_t a, std::size_t b) { return *found[a] < *found[b]; });
        for (const auto i : c.order) c.steps.push_back(*found[i]);
        c.source = found_source;
        c.known = true;
        return c;
    }
    if (!times.empty() && all_distinct(times)) {
        std::stable_sort(c.order.begin(), c.order.end(),
                         [&](std::size_t a, std::size_t b) { return *times[a] < *times[b]; });
        c.source = "trace time";
    } else {
        c.source = "order given";
    }
    for (std::size_t i = 0; i < n; ++i) c.steps.push_back(static_cast<std::int64_t>(i));
    return c;
}

void require_points(std::size_t points, std::size_t warmup) {
    if (points < 2) throw input_error("trend needs two captures or more", "");
    if (points < warmup + kMinPoints)
        throw usage_error(fmt::format(
            "trend needs at least {} captures after --warmup {} to tell steady growth from a jump (got {}); for "
            "two captures use diff",
            kMinPoints, warmup, points));
}

TrendSeries series(std::string name, std::vector<std::int64_t> bytes, const std::vector<std::int64_t>& steps,
                   std::size_t warmup, std::int64_t noise) {
    TrendSeries s;
    s.name = std::move(name);
    s.bytes = std::move(bytes);
    s.fit = fit_series(steps, s.bytes, nullptr, warmup, noise);
    return s;
}

const TrendSeries* find_series(const std::vector<TrendSeries>& all, std::string_view name) {
    for (const auto& s : all)
        if (s.name == name) return &s;
    return nullptr;
}

// The overall verdict, from the sites and the totals; a site that leaks makes it a leak, so
// that no site contradicts it.
void judge(TrendResult& t) {
    std::vector<const TrendSite*> leaking;
    for (const auto& s : t.sites)
        if (s.fit.verdict == "leak") leaking.push_back(&s);
    const auto* allocated = find_series(t.totals, "allocated_bytes");
    const auto* reserved = find_series(t.totals, "reserved_bytes");
    const std::string a = allocated ? allocated->fit.verdict : "stable";
    const std::string r = reserved ? reserved->fit.verdict : "stable";
    if (!leaking.empty() || a == "leak") {
        t.verdict = "leak";
        for (const auto* s : leaking)
            t.evidence.push_back(fmt::format("{} grows {} steadily (R² {:.2f}, {:.0f}% of intervals not down)",
                                             s->site.label(), util::rate(s->fit.slope_bytes_per_step, t.steps_known),
                                             s->fit.r2, 100 * s->fit.monotonic_share));
    } else if (a == "one_time" || a == "sawtooth" || a == "irregular" || a == "shape_growth") {
        t.verdict = a == "shape_growth" ? "irregular" : a;
    } else if (r == "leak" || r == "one_time" || r == "irregular") {
        t.verdict = "cache_growth";
    } else {
        t.verdict = "stable";
    }
    // Growth that one early jump hides: say where a fit after it would start.
    if (allocated && t.verdict != "leak" && t.verdict != "stable") {
        const auto& b = allocated->bytes;
        std::size_t jump = 0;
        for (std::size_t i = 1; i < b.size(); ++i)
            if (b[i] - b[i - 1] > b[jump + 1] - b[jump]) jump = i - 1;
        const std::size_t warmup = jump + 1;
        if (warmup > t.warmup && b.size() >= warmup + kMinPoints &&
            fit_series(t.steps, b, nullptr, warmup, series_noise(b)).verdict == "leak")
            t.notes.push_back(
                fmt::format("after the jump at {} {}, allocated memory grows steadily: --warmup {} fits "
                            "from there",
                            t.steps_known ? "step" : "capture", t.steps[warmup], warmup));
    }
    for (const auto* s : {allocated, reserved})
        if (s)
            t.evidence.push_back(fmt::format("{}: {} → {}, {} by least squares (R² {:.2f}): {}", s->name,
                                             util::human_bytes(s->bytes.front()), util::human_bytes(s->bytes.back()),
                                             util::rate(s->fit.slope_bytes_per_step, t.steps_known), s->fit.r2,
                                             s->fit.verdict));
}

Diagnosis diagnose(const TrendSite& s, bool steps_known, std::int64_t distance) {
    SiteFacts f;
    f.category = s.category;
    const auto n = s.bytes_by_step.size();
    f.before_blocks = s.blocks_by_step.front();
    f.after_blocks = s.blocks_by_step.back();
    f.delta_blocks = f.after_blocks - f.before_blocks;
    f.new_blocks = std::max<std::int64_t>(0, f.delta_blocks);
    f.delta_bytes = s.bytes_by_step[n - 1] - s.bytes_by_step[0];
    f.growth_bytes_per_step = s.fit.slope_bytes_per_step;
    f.steps_known = steps_known;
    f.step_distance = distance;
    if (s.site.user_code) f.user_frames.push_back({s.site.filename, s.site.line, s.site.name, true});
    if (s.fit.verdict == "leak")
        f.verdict = SiteVerdict::leak;
    else if (s.fit.verdict == "one_time" && !is_one_time(s.category)) {
        auto d = from_pattern("one_time_growth");
        d.evidence.push_back(fmt::format("{} → {}, four fifths or more of it in one interval",
                                         util::human_bytes(s.bytes_by_step.front()),
                                         util::human_bytes(s.bytes_by_step.back())));
        return d;
    } else if (s.fit.verdict == "one_time")
        f.verdict = SiteVerdict::one_time;
    else if (s.fit.verdict == "shape_growth")
        f.verdict = SiteVerdict::shape_growth;
    else if (s.fit.verdict == "sawtooth") {
        auto d = from_pattern("sawtooth");
        d.evidence.push_back(fmt::format("it went up and down across the captures ({:.0f}% of intervals not down)",
                                         100 * s.fit.monotonic_share));
        return d;
    } else
        return {};
    return diagnose_site(f);
}

}  // namespace

SeriesFit fit_series(const std::vector<std::int64_t>& steps, const std::vector<std::int64_t>& bytes,
                     const std::vector<std::int64_t>* blocks, std::size_t warmup, std::int64_t noise) {
    SeriesFit f;
    for (std::size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] > 0) {
            f.first_step = steps[i];
            break;
        }
    const std::size_t from = std::min(warmup, bytes.size() > 0 ? bytes.size() - 1 : 0);
    const std::size_t n = bytes.size() - from;
    if (n < 2) return f;
    // Least squares in long double: byte counts reach 2^40 and their squares 2^80.
    long double mx = 0, my = 0;
    for (std::size_t i = from; i < bytes.size(); ++i) {
        mx += static_cast<long double>(steps[i]);
        my += static_cast<long double>(bytes[i]);
    }
    mx /= static_cast<long double>(n);
    my /= static_cast<long double>(n);
    long double sxx = 0, sxy = 0, syy = 0;
    for (std::size_t i = from; i < bytes.size(); ++i) {
        const long double dx = static_cast<long double>(steps[i]) - mx, dy = static_cast<long double>(bytes[i]) - my;
        sxx += dx * dx;
        sxy += dx * dy;
        syy += dy * dy;
    }
    const long double slope = sxx > 0 ? sxy / sxx : 0;
    f.slope_bytes_per_step = static_cast<double>(slope);
    f.r2 = syy > 0 && sxx > 0 ? static_cast<double>((sxy * sxy) / (sxx * syy)) : 1.0;
    std::vector<std::int64_t> d;
    std::size_t not_down = 0;
    for (std::size_t i = from + 1; i < bytes.size(); ++i) {
        d.push_back(bytes[i] - bytes[i - 1]);
        if (d.back() >= -noise) ++not_down;
    }
    f.monotonic_share = static_cast<double>(not_down) / static_cast<double>(d.size());
    f.verdict = verdict_of(d, blocks, from, f.r2, noise);
    f.score = f.slope_bytes_per_step * f.r2 * f.monotonic_share;
    return f;
}

TrendResult trend_snapshots(std::vector<SeriesCapture> captures, const AnalysisOptions& options,
                            const TrendOptions& trend) {
    TrendResult t;
    t.kind = "snapshot";
    t.device = options.device;
    t.warmup = trend.warmup;
    require_points(captures.size(), trend.warmup);
    std::vector<std::optional<std::int64_t>> found, times;
    for (const auto& c : captures) {
        found.push_back(util::step_from_file_name(c.file));
        times.push_back(c.info.trace_last_us);
    }
    const auto choice = choose_steps(captures.size(), found, "file names", times, trend);
    t.steps = choice.steps;
    t.steps_source = choice.source;
    t.steps_known = choice.known;
    const std::size_t n = captures.size();
    for (const auto i : choice.order) t.files.push_back(captures[i].file);

    // Totals and categories.
    const std::pair<const char*, std::int64_t MemoryTotals::*> totals[] = {
        {"allocated_bytes", &MemoryTotals::allocated_bytes},
        {"reserved_bytes", &MemoryTotals::reserved_bytes},
        {"active_bytes", &MemoryTotals::active_bytes},
        {"requested_bytes", &MemoryTotals::requested_bytes},
        {"inactive_split_bytes", &MemoryTotals::inactive_split_bytes}};
    for (const auto& [name, field] : totals) {
        std::vector<std::int64_t> bytes;
        for (const auto i : choice.order) bytes.push_back(captures[i].info.totals.*field);
        const auto noise = series_noise(bytes);
        t.totals.push_back(series(name, std::move(bytes), t.steps, t.warmup, noise));
    }
    for (std::size_t k = 0; k < category_count; ++k) {
        TrendSeries s;
        s.name = std::string(to_string(static_cast<Category>(k)));
        for (const auto i : choice.order) {
            s.bytes.push_back(captures[i].info.categories[k].bytes);
            s.blocks.push_back(captures[i].info.categories[k].blocks);
        }
        if (std::all_of(s.bytes.begin(), s.bytes.end(), [](std::int64_t b) { return b == 0; })) continue;
        s.fit = fit_series(t.steps, s.bytes, &s.blocks, t.warmup, series_noise(s.bytes));
        t.categories.push_back(std::move(s));
    }

    // Captures of one run share their project root; captures of different projects or
    // machines can be compared as levels, but nothing in them grows "steadily".
    std::set<std::string> roots;
    for (const auto& c : captures)
        if (const auto root = detail::project_root_of(c.info.top_sites); !root.empty()) roots.insert(root);
    // Sites by (path below the project root, line, function, category).
    std::map<detail::RelativeSite, TrendSite> sites;
    for (std::size_t pos = 0; pos < n; ++pos) {
        const auto& info = captures[choice.order[pos]].info;
        const std::string root = detail::project_root_of(info.top_sites);
        for (const auto& u : info.top_sites) {
            auto& s = sites[detail::relative_site(u, root)];
            if (s.bytes_by_step.empty()) {
                s.site = u.site;
                s.category = u.category;
                s.bytes_by_step.assign(n, 0);
                s.blocks_by_step.assign(n, 0);
            }
            s.bytes_by_step[pos] += u.bytes;
            s.blocks_by_step[pos] += u.blocks;
        }
        captures[choice.order[pos]].info.top_sites.clear();  // the series need not hold them twice
    }
    std::vector<TrendSite> all;
    const std::int64_t distance = t.steps.back() - t.steps[std::min(t.warmup, n - 1)];
    for (auto& [key, s] : sites) {
        s.fit = fit_series(t.steps, s.bytes_by_step, &s.blocks_by_step, t.warmup, 0);
        if (roots.size() > 1 && s.fit.verdict == "leak") s.fit.verdict = "irregular";
        s.diagnosis = diagnose(s, t.steps_known, distance);
        all.push_back(std::move(s));
    }
    std::sort(all.begin(), all.end(), [](const TrendSite& a, const TrendSite& b) {
        if (a.fit.score != b.fit.score) return a.fit.score > b.fit.score;
        if (a.bytes_by_step.back() != b.bytes_by_step.back()) return a.bytes_by_step.back() > b.bytes_by_step.back();
        return a.site < b.site;
    });
    t.sites_total = all.size();
    const std::size_t limit = options.top == 0 ? kMaxTrendSitesListed : std::min(options.top, kMaxTrendSitesListed);
    // Leaks are listed whatever --top says: a report must not hide what its verdict rests on.
    std::vector<TrendSite> listed;
    for (auto& s : all)
        if (listed.size() < limit || s.fit.verdict == "leak") listed.push_back(std::move(s));
    for (std::size_t i = 0; i < listed.size(); ++i) listed[i].rank = i + 1;
    t.sites = std::move(listed);
    judge(t);
    if (roots.size() > 1) {
        t.warnings.push_back(
            fmt::format("the captures come from {} different project roots ({}): not one run, so "
                        "sites are compared as levels and none is called a leak",
                        roots.size(), fmt::join(roots, ", ")));
        t.notes.push_back(t.warnings.back());
        if (t.verdict == "leak") t.verdict = "irregular";
    }
    if (!t.steps_known)
        t.notes.push_back(fmt::format("steps unknown ({}): slopes are per capture; give --steps A,B,C,... for per step",
                                      t.steps_source));
    if (t.warmup > 0)
        t.notes.push_back(fmt::format("the first {} interval{} (warm-up) are left out of the fit", t.warmup,
                                      t.warmup == 1 ? "" : "s"));
    return t;
}

TrendResult trend_stats(const std::vector<stats::StatsCapture>& captures, const AnalysisOptions& options,
                        const TrendOptions& trend) {
    TrendResult t;
    t.kind = captures.empty() ? "memory_summary" : std::string(stats::to_string(captures.front().kind));
    t.warmup = trend.warmup;
    // One device: --device, else the first any table names.
    std::optional<int> device = options.device;
    if (!device)
        for (const auto& c : captures)
            for (const auto& table : c.tables)
                if (table.device && !device) device = table.device;
    t.device = device;
    std::vector<const stats::StatsTable*> points;
    std::vector<std::size_t> point_file;  // index into captures
    std::vector<std::optional<std::int64_t>> found;
    bool one_table_per_file = true;
    std::size_t total = 0;
    for (const auto& c : captures) total += c.tables.size();
    // A log may hold hundreds of thousands of tables: sized once, never grown.
    points.reserve(total);
    point_file.reserve(total);
    found.reserve(total);
    for (std::size_t f = 0; f < captures.size(); ++f) {
        const auto tables = tables_of(captures[f], device);
        if (tables.size() != 1) one_table_per_file = false;
        for (const auto* table : tables) {
            points.push_back(table);
            point_file.push_back(f);
            found.push_back(table->step);
        }
        t.files.push_back(captures[f].file);
    }
    require_points(points.size(), trend.warmup);
    std::string source = "log lines";
    if (std::any_of(found.begin(), found.end(), [](const auto& s) { return !s.has_value(); }) && one_table_per_file) {
        for (std::size_t i = 0; i < points.size(); ++i)
            found[i] = util::step_from_file_name(captures[point_file[i]].file);
        source = "file names";
    }
    const auto choice = choose_steps(points.size(), found, source, {}, trend);
    std::vector<std::optional<std::int64_t>>().swap(found);
    t.steps = choice.steps;
    t.steps_source = choice.source;
    t.steps_known = choice.known;
    if (one_table_per_file) {
        t.files.clear();
        for (const auto i : choice.order) t.files.push_back(captures[point_file[i]].file);
    }
    const std::pair<const char*, const char*> metrics[] = {
        {"allocated_bytes", "allocated_bytes.all.current"},
        {"reserved_bytes", "reserved_bytes.all.current"},
        {"active_bytes", "active_bytes.all.current"},
        {"requested_bytes", "requested_bytes.all.current"},
        {"inactive_split_bytes", "inactive_split_bytes.all.current"}};
    for (const auto& [name, key] : metrics) {
        std::vector<std::int64_t> bytes;
        std::int64_t widest = 0;
        bool complete = true;
        for (const auto i : choice.order) {
            const auto at = points[i]->stats.find(key);
            if (at == points[i]->stats.end()) {
                complete = false;
                break;
            }
            const ByteRange r = (*at).second;
            bytes.push_back(r.low + (r.high - r.low) / 2);
            widest = std::max(widest, r.high - r.low);
        }
        if (!complete) continue;
        // A change within the tables' rounding is no change.
        const auto noise = std::max(series_noise(bytes), widest);
        t.totals.push_back(series(name, std::move(bytes), t.steps, t.warmup, noise));
    }
    if (t.totals.empty())
        throw input_error("no table holds allocated or reserved memory in every capture of the series",
                          t.files.front());
    judge(t);
    t.notes.push_back("summary values are exact to their printed unit; the fit uses the middle of each range");
    if (!t.steps_known)
        t.notes.push_back(fmt::format("steps unknown ({}): slopes are per capture; give --steps A,B,C,... for per step",
                                      t.steps_source));
    for (const auto* table : points)
        for (const auto& w : table->warnings) t.warnings.push_back(w);
    return t;
}

std::optional<std::string> check_trend_gate(const TrendResult& t, std::int64_t bytes_per_step) {
    const auto unit = t.steps_known ? "step" : "capture";
    for (const auto& s : t.totals)
        if (s.name == "allocated_bytes" && s.fit.verdict == "leak" &&
            s.fit.slope_bytes_per_step > static_cast<double>(bytes_per_step))
            return fmt::format("allocated memory grows {} per {}, more than --fail-on-growth {}",
                               util::human_bytes(static_cast<std::int64_t>(s.fit.slope_bytes_per_step)), unit,
                               util::human_bytes(bytes_per_step));
    for (const auto& s : t.sites)
        if (s.fit.verdict == "leak" && s.fit.slope_bytes_per_step > static_cast<double>(bytes_per_step))
            return fmt::format("{} grows {} per {}, more than --fail-on-growth {}", s.site.label(),
                               util::human_bytes(static_cast<std::int64_t>(s.fit.slope_bytes_per_step)), unit,
                               util::human_bytes(bytes_per_step));
    return std::nullopt;
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

}  // namespace memsnap::analysis
