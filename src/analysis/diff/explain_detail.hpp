#pragma once
// Internal parts of explain(): the step-level diagnosis and the notes of a snapshot diff.

#include <memsnap/analysis/diff/explain.hpp>

namespace memsnap::analysis::detail {

// The diagnosis at the top of the report. For a retained autograd graph (many forward-pass
// leak sites gaining the same number of blocks) it also marks those sites in `judged`.
Diagnosis overall_diagnosis(Verdict verdict, const std::vector<SiteGroups>& sites, std::vector<SiteJudgement>& judged,
                            const StackIndex& index, const SiteDiagnoser& diagnose, const util::Steps& steps,
                            const std::optional<Convergence>& convergence, const std::string& reason);

// Notes that qualify the whole report: unknown steps, missing stacks, --focus, pending frees.
std::vector<std::string> diff_notes(const ExplainInput& in, std::int64_t threshold, bool shares_known);

}  // namespace memsnap::analysis::detail
