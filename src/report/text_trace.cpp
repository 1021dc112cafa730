// Text writer for `trace`: the replayed trace of one device, for a terminal.
#include "format.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report::detail {

namespace {

// "▁▂▃▄▅▆▇█" bars of the values, lowest to highest; more than 60 values are shown as the
// highest of each of 60 buckets.
std::string sparkline(const std::vector<std::int64_t>& all) {
    static constexpr const char* bars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    constexpr std::size_t kWidth = 60;
    if (all.empty()) return "";
    std::vector<std::int64_t> values;
    if (all.size() <= kWidth) {
        values = all;
    } else {
        for (std::size_t b = 0; b < kWidth; ++b) {
            const auto begin = all.begin() + static_cast<std::ptrdiff_t>(b * all.size() / kWidth);
            const auto end = all.begin() + static_cast<std::ptrdiff_t>((b + 1) * all.size() / kWidth);
            values.push_back(*std::max_element(begin, end));
        }
    }
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    std::string out;
    for (const auto v : values) {
        const double share = *hi == *lo ? 0.0 : static_cast<double>(v - *lo) / static_cast<double>(*hi - *lo);
        out += bars[std::min<std::size_t>(7, static_cast<std::size_t>(share * 8))];
    }
    return out;
}

std::string seconds_since(std::int64_t first_us, std::int64_t us) {
    if (first_us < 0 || us < 0) return "time unknown";
    return fmt::format("+{:.3f} s", static_cast<double>(us - first_us) / 1e6);
}

}  // namespace

std::string trace_text(const analysis::TraceResult& t, const RenderOptions& options) {
    const Style st{options.color};
    std::string out = fmt::format("trace of {}, device {} ({})\n", util::printable(t.file), t.device,
                                  t.generation.empty() ? "generation unknown" : t.generation);
    if (t.devices.size() > 1) out += fmt::format("  devices with a trace: {} (--device N for another)\n", device_list(t.devices));
    if (!t.ordered()) out += "  source      block history (no trace events)\n";
    out += fmt::format("  {}", t.ordered() ? "events      " : "allocations ");
    out += fmt::format("{}", t.events);
    if (t.time_first_us >= 0 && t.time_last_us >= 0)
        out += fmt::format(" over {:.3f} s", static_cast<double>(t.time_last_us - t.time_first_us) / 1e6);
    out += "\n";
    if (t.ordered())
        out += fmt::format("  ring buffer {}\n", t.truncated ? "truncated: the trace does not reach back to the start"
                                                         : "complete as far as the trace shows");
    for (const auto& e : t.truncation_evidence) out += fmt::format("              - {}\n", e);
    for (const auto& d : t.disagreements) out += fmt::format("  disagrees   {}\n", d);
    out += fmt::format("  iterations  {} ({})\n", t.iterations, t.iteration_source);
    if (!t.allocated_by_iteration.empty()) {
        const auto [lo, hi] = std::minmax_element(t.allocated_by_iteration.begin(), t.allocated_by_iteration.end());
        out += fmt::format("  allocated   {}  highest per iteration, {} → {}\n", sparkline(t.allocated_by_iteration),
                           util::human_bytes(*lo), util::human_bytes(*hi));
    }

    if (t.ordered()) {
        out += fmt::format("\n{} {} allocated, {} into the trace (event {})\n", st.bold("Peak"),
                           util::human_bytes(t.peak.bytes), seconds_since(t.time_first_us, t.peak.time_us), t.peak.event);
        usage_lines(out, t.peak.usage, "  ");
    }

    for (const auto& o : t.ooms) oom_text(out, o, st, seconds_since(t.time_first_us, o.time_us));

    out += fmt::format("\n{} ({} of {} sites)\n", st.bold("Live at the end, by site"), t.sites.size(), t.sites_total);
    for (const auto& s : t.sites) {
        out += fmt::format("#{:<3} {:>12}  {:>18}  {:<9} {}  [{}]\n", s.rank, util::human_bytes(s.live_bytes),
                           counted(s.live_allocations, "allocation"), st.verdict(s.verdict), site_label(s.site), analysis::to_string(s.category));
        if (s.verdict == "leak")
            out += fmt::format("      +{} ({}) every iteration, still live\n",
                               counted(s.leak_allocations_per_iteration, "allocation"),
                               util::human_bytes(s.leak_bytes_per_iteration));
        if (!s.per_iteration.empty())
            out += fmt::format("      per iteration{}: {}; before the first: {}; in the unfinished last: {}\n",
                               s.per_iteration_first ? fmt::format(" from #{}", s.per_iteration_first + 1) : "",
                               run_lengths(s.per_iteration), s.warmup_allocations, s.current_allocations);
        for (const auto& stack : s.stacks) {
            if (stack.frames.empty()) continue;
            out += fmt::format("      stack ({}, {}):\n", counted(stack.delta_blocks, "allocation"),
                               util::human_bytes(stack.delta_bytes));
            for (const auto& line : stack_lines(stack, t.frame_table, options.cpp_frames, 8))
                out += fmt::format("        {}\n", line);
        }
    }
    if (!t.notes.empty()) {
        out += "\nNotes\n";
        for (const auto& n : t.notes) out += fmt::format("  - {}\n", n);
    }
    return out;
}

}  // namespace memsnap::report::detail
