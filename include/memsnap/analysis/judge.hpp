#pragma once
// What the numbers mean: the verdict vocabulary, whether two captures can come from one process,
// the reading of totals against their noise floor, diagnosis patterns and advice. Uses sites.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/analysis/judge/rules.hpp>
#include <memsnap/analysis/judge/trace_overlap.hpp>
#include <memsnap/analysis/judge/verdict.hpp>
