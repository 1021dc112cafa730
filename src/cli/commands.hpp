#pragma once
// The commands, as functions from parsed options to output text. CLI11 stays in app.cpp.

#include <memsnap/analysis/sites.hpp>
#include <memsnap/pickle/limits.hpp>

#include <optional>
#include <string>
#include <vector>

namespace memsnap::cli {

struct GlobalOptions {
    pickle::Limits limits;
    analysis::SiteRules rules;
    std::string color = "auto";
};

struct InfoOptions {
    std::string file;
    std::string format = "text";
    std::size_t top = 10;
};

struct DiffOptions {
    std::string before, after;
    std::string steps;  // "A,B"
    std::string format = "text";
    std::optional<std::size_t> top;  // default: 10 for text/markdown, all for json/csv
    std::string min_growth;
    std::string fail_on_growth;
    std::optional<int> device;
    std::vector<std::string> hide, focus;
    std::string granularity = "line";
};

struct CommandOutput {
    std::string text;
    std::string gate_message;  // non-empty: a gate tripped (exit 3)
};

// Both throw memsnap::Error; the caller maps it to an exit code.
CommandOutput run_info(const InfoOptions& options, const GlobalOptions& globals);
CommandOutput run_diff(const DiffOptions& options, const GlobalOptions& globals);

// Whether text output may carry ANSI colour: a terminal, NO_COLOR unset, --color honoured.
bool use_color(const GlobalOptions& globals);

}  // namespace memsnap::cli
