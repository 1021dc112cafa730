#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/series/trend.hpp>

#include <algorithm>

namespace memsnap::analysis {

namespace {

// The intervals of a series after warm-up, up and down past the noise floor.
SeriesShape shape_of_series(const std::vector<std::int64_t>& bytes, const std::vector<std::int64_t>* blocks,
                            std::size_t from, std::int64_t noise, double r2) {
    SeriesShape s;
    s.points = bytes.size() - from;
    s.noise = noise;
    s.r2 = r2;
    s.net = bytes.back() - bytes[from];
    const auto [low, high] = std::minmax_element(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end());
    s.spread = *high - *low;
    for (std::size_t i = from + 1; i < bytes.size(); ++i) {
        const std::int64_t d = bytes[i] - bytes[i - 1];
        if (d > noise) {
            ++s.ups;
            s.up_sum += d;
            s.max_up = std::max(s.max_up, d);
        } else if (d < -noise) {
            ++s.downs;
            s.down_sum -= d;
        }
    }
    s.blocks_constant = blocks && blocks->size() > from &&
                        std::all_of(blocks->begin() + static_cast<std::ptrdiff_t>(from), blocks->end(),
                                    [&](std::int64_t b) { return b == (*blocks)[from]; });
    return s;
}

}  // namespace

SeriesFit fit_series(const std::vector<std::int64_t>& steps, const std::vector<std::int64_t>& bytes,
                     const std::vector<std::int64_t>* blocks, std::size_t warmup, std::int64_t noise,
                     bool behaviour_allowed, bool ordered) {
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
    f.r2_defined = syy > 0 && sxx > 0;
    f.r2 = f.r2_defined ? static_cast<double>((sxy * sxy) / (sxx * syy)) : 1.0;
    std::size_t not_down = 0;
    for (std::size_t i = from + 1; i < bytes.size(); ++i) not_down += bytes[i] - bytes[i - 1] >= -noise;
    f.monotonic_share = static_cast<double>(not_down) / static_cast<double>(n - 1);
    const auto shape = shape_of_series(bytes, blocks, from, noise, f.r2);
    f.verdict = judge_series(shape, behaviour_allowed, ordered);
    // Without an order, a slope says nothing: sites rank by how far apart their levels lie.
    // Between captures not shown comparable, how steady the growth looks says nothing either.
    f.score = !ordered            ? static_cast<double>(shape.spread)
              : behaviour_allowed ? f.slope_bytes_per_step * f.r2 * f.monotonic_share
                                  : f.slope_bytes_per_step;
    return f;
}

}  // namespace memsnap::analysis
