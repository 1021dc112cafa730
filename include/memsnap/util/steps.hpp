#pragma once
// Training steps of two captures: from --steps A,B or from a step word in the file names.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsnap::util {

struct Steps {
    std::optional<std::pair<std::int64_t, std::int64_t>> span;  // (A, B) with A < B
    std::string source = "unknown";                             // "--steps", "file names", "unknown"
    std::string note;  // why file-name steps were not used, when they were found but not usable

    bool known() const { return span.has_value(); }
    std::int64_t distance() const { return span ? span->second - span->first : 0; }
};

// The step a file name carries after a step word (step, iter, it, iteration, epoch, batch,
// global_step; a word of its own, not the end of "commit"), in the name without directory
// and final extension: "run_step100.pickle" -> 100, "iter-500.pkl" -> 500. Other numbers
// ("ctx128", "fp32", "018") are not steps.
std::optional<std::int64_t> step_from_file_name(std::string_view path);

// The step a log line names before a table printed under it: "step 100", "Step: 100",
// "global_step=100", "iter 500", "iteration #500". Epochs and batches are not steps here: a
// line naming both an epoch and a step gives the step.
std::optional<std::int64_t> step_from_text(std::string_view line);

// The rank a file name carries: "rank3", "rank_3", "rank-3", "-r3", "_r3" (of one job's
// captures, one per rank).
std::optional<std::int64_t> rank_from_file_name(std::string_view path);

// Parses "100,200,300" (two or more, increasing). Throws Error (usage) otherwise.
std::vector<std::int64_t> parse_step_list(std::string_view text, std::size_t count);

// Parses "100,500". Throws Error (usage) when malformed, out of range, or B <= A.
std::pair<std::int64_t, std::int64_t> parse_steps(std::string_view text);

// --steps wins; otherwise a step word in both names with B > A gives the steps; else unknown.
Steps resolve_steps(std::string_view option, std::string_view before, std::string_view after);

}  // namespace memsnap::util
