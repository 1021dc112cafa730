// Text writer for `trace`: the replayed trace of one device, for a terminal.
#include "format.hpp"
#include "writers.hpp"

#include <memsnap/util/format.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace memsnap::report::detail {

namespace {

std::string seconds_since(std::int64_t first_us, std::int64_t us) {
    if (first_us < 0 || us < 0) return "time unknown";
    return fmt::format("+{:.3f} s", static_cast<double>(us - first_us) / 1e6);
}

}  // namespace

std::string trace_text(const analysis::TraceResult& t, const RenderOptions& options) {
    const Style st{options.color};
    std::string out = fmt::format("trace of {}, device {} ({})\n", util::printable(t.file), t.device,
                                  t.generation.empty() ? "generation unknown" : t.generation);
    if (t.devices.size() > 1)
        out += fmt::format("  devices with a trace: {} (--device N for another)\n", device_list(t.devices));
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
    if (!t.snapshot_events.empty())
        out += fmt::format("  snapshots   {} taken while recording (first at event {})\n", t.snapshot_events.size(),
                           t.snapshot_events.front());
    if (!t.allocated_by_iteration.empty()) {
        const auto [lo, hi] = std::minmax_element(t.allocated_by_iteration.begin(), t.allocated_by_iteration.end());
        out += fmt::format("  allocated   {}  highest per iteration, {} → {}\n", sparkline(t.allocated_by_iteration),
                           util::human_bytes(*lo), util::human_bytes(*hi));
    }

    if (t.ordered()) {
        out +=
            fmt::format("\n{} {} allocated, {} into the trace (event {})\n", st.bold("Peak"),
                        util::human_bytes(t.peak.bytes), seconds_since(t.time_first_us, t.peak.time_us), t.peak.event);
        usage_lines(out, t.peak.usage, "  ");
    }

    for (const auto& o : t.ooms) oom_text(out, o, st, seconds_since(t.time_first_us, o.time_us));

    out += fmt::format("\n{} ({} of {} sites)\n", st.bold("Live at the end, by site"), t.sites.size(), t.sites_total);
    for (const auto& s : t.sites) {
        out += fmt::format("#{:<3} {:>12}  {:>18}  {:<9} {}  [{}]\n", s.rank, util::human_bytes(s.live_bytes),
                           counted(s.live_allocations, "allocation"), st.verdict(s.verdict), site_label(s.site),
                           analysis::to_string(s.category));
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
