#pragma once
// Internal: what every writer shares. Byte, rate and range formats are util/format.hpp's; this
// adds the report-level pieces: colour, frame and site labels, stacks, steps, same-process.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/util/steps.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace memsnap::report {

// ANSI colour for terminals; plain text otherwise.
struct Style {
    bool color = false;
    std::string paint(std::string_view code, std::string_view text) const;
    std::string bold(std::string_view text) const;
    // A verdict in capitals, red for leaks, yellow for growth that is not, green otherwise.
    std::string verdict(std::string_view name) const;
};

// "file:line name", or "file name" when the line is 0; safe to print.
std::string frame_label(const analysis::FrameText& frame);
// The site's label, safe to print.
std::string site_label(const analysis::SiteKey& site);

// A stack for people, innermost first: its Python frames (at most `python_limit`, 0 for all),
// then how many C++ frames were left out; with `cpp_frames` every frame in recorded order.
// Ends with how many outer frames the analysis did not keep, if any.
std::vector<std::string> stack_lines(const analysis::RepresentativeStack& stack,
                                     const std::vector<analysis::FrameText>& table, bool cpp_frames,
                                     std::size_t python_limit);

// What was live at a moment of a trace: categories, then sites, each line after `indent`.
void usage_lines(std::string& out, const analysis::MomentUsage& usage, const char* indent);
// One explained out-of-memory event, for `trace` and `info`; `when` says when it happened.
void oom_text(std::string& out, const analysis::OomExplanation& oom, const Style& style, const std::string& when);

// Counts with runs written once: "2×31", "0×3 1 0×414".
std::string run_lengths(const std::vector<std::int64_t>& counts);
// "▁▂▃▄▅▆▇█" bars of the values, lowest to highest; more than 60 values are shown as the
// highest of each of 60 buckets.
std::string sparkline(const std::vector<std::int64_t>& values);
// "1 allocation", "6 allocations".
std::string counted(std::int64_t n, std::string_view noun);

// "100 → 500 (400 steps, from file names)" or "unknown".
std::string steps_text(const util::Steps& steps);
// "yes", "no" or "unknown", then the first piece of evidence.
std::string same_process_text(const analysis::SameProcess& same);
// "0, 1", or "none".
std::string device_list(const std::vector<int>& devices);

}  // namespace memsnap::report
