#pragma once
// What the user asked of an analysis, whatever the capture kind. The CLI fills this in; the
// analysis applies all of it (device, top, min-growth), so writers print what they are given.

#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stack_index.hpp>
#include <memsnap/util/steps.hpp>

#include <cstdint>
#include <optional>

namespace memsnap::analysis {

enum class StackSamples { none, changed, all };

struct AnalysisOptions {
    std::optional<int> device;    // only this device; a capture without it is an input error
    SiteRules rules;              // what is user code
    StackOptions stacks;          // hide, focus, granularity (diff)
    util::Steps steps;            // diff: the steps of the two captures
    std::size_t top = 10;         // sites listed; 0 lists every site
    std::int64_t min_growth = 0;  // diff: sites whose absolute change is below this are not listed
    // diff: also each stack's before and after, for pictures: those that changed (a picture of
    // the growth), or all (pictures of one side).
    StackSamples stack_samples = StackSamples::none;
};

}  // namespace memsnap::analysis
