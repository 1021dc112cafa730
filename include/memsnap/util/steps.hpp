#pragma once
// Training steps of two captures: from --steps A,B or from the file names.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace memsnap::util {

// The step a file name carries, without its directory and final extension: the last number
// after a step word (step, iter, it, iteration, epoch, batch, global_step), else the last
// integer: "run_step100.pickle" -> 100, "iter500.pkl" -> 500, "step_500.pickle" -> 500.
std::optional<std::int64_t> step_from_file_name(std::string_view path);

// Parses "100,500". Throws Error (usage) when malformed or A == B.
std::pair<std::int64_t, std::int64_t> parse_steps(std::string_view text);

struct ResolvedSteps {
    std::optional<std::pair<std::int64_t, std::int64_t>> steps;
    std::string source;  // "--steps", "file names" or "unknown"
};
// --steps wins. Otherwise a step word in both names, or names that differ only in their
// numbers ("snap_100" vs "snap_500"; not "fp32" vs "bf16"), give the steps; else unknown.
ResolvedSteps resolve_steps(std::string_view option, std::string_view before, std::string_view after);

}  // namespace memsnap::util
