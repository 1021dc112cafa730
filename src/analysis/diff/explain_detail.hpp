#pragma once
// Internal parts of explain(): the step-level diagnosis and the notes of a snapshot diff.

#include <memsnap/analysis/diff/explain.hpp>

namespace memsnap::analysis::detail {

// The diagnosis at the top of the report. For a retained autograd graph (many forward-pass
// leak sites gaining the same number of blocks) it also marks those sites in `judged`.
Diagnosis overall_diagnosis(Verdict verdict, const ExplainInput& in, std::vector<SiteJudgement>& judged,
                            const SiteDiagnoser& diagnose, const std::optional<Convergence>& convergence);

// Notes that qualify the whole report: comparability, unknown steps, missing stacks, --focus,
// pending frees, shares.
Facts diff_notes(const ExplainInput& in, std::int64_t threshold, bool shares_known);

}  // namespace memsnap::analysis::detail
