#pragma once
// Turns the shape of the growth into the likely cause and its fix (docs/leak-patterns.md).
// Snapshots record where memory was allocated, not who keeps it alive, so every diagnosis is
// worded as "likely" and carries the evidence it used. Keyword patterns look at user code
// only; categories and counts decide the rest.

#include <memsnap/analysis/judge/verdict.hpp>
#include <memsnap/analysis/sites/categories.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace memsnap::analysis {

struct Diagnosis {
    std::string pattern;  // "retained_graph", "dataset", ... ("" when none)
    std::string summary;  // "likely ...": honest wording
    std::string fix;
    std::vector<std::string> evidence;
    bool empty() const { return summary.empty(); }
};

// What the diagnosis of one site looks at.
struct SiteFacts {
    SiteVerdict verdict = SiteVerdict::stable;
    Category category = Category::unknown;
    std::int64_t before_blocks = 0, after_blocks = 0, delta_blocks = 0;
    std::int64_t new_blocks = 0, gone_blocks = 0, delta_bytes = 0;
    double growth_bytes_per_step = 0;
    bool steps_known = false;
    std::int64_t step_distance = 0;
    std::vector<FrameText> user_frames;  // user frames of its growing stacks
    bool one_process = true;             // blocks can be followed between the captures
    std::string growth_reason;           // SiteVerdict::growth: why it is not a leak
};

Diagnosis diagnose_site(const SiteFacts& site);

// A diagnosis with the text of an advice pattern (advice.hpp) and no evidence yet.
Diagnosis from_pattern(std::string_view id);

}  // namespace memsnap::analysis
