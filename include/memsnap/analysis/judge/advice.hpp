#pragma once
// Every sentence of advice memsnap prints, and the fixed text of every diagnosis pattern, lives
// here and nowhere else (docs/leak-patterns.md is where they come from).

#include <memsnap/analysis/judge/verdict.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace memsnap::analysis::advice {

// A diagnosis pattern's fixed words: the likely cause and its fix.
struct PatternText {
    std::string_view id;
    std::string_view summary;
    std::string_view fix;
};
// Throws std::out_of_range for an id that is not in the table (a programming error).
const PatternText& pattern(std::string_view id);

struct Context {
    bool from_snapshots = false;  // stacks and sites back the verdict
    bool new_ooms = false, new_retries = false;
    std::string growth_reason;  // Verdict::growth: why the captures cannot show a leak
};

// The advice lines for a verdict.
std::vector<std::string> for_verdict(Verdict verdict, const Context& context);

}  // namespace memsnap::analysis::advice
