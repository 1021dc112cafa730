#pragma once
// Internal: every sentence memsnap prints about its findings. The analysis states facts,
// patterns and advice as data; this file phrases them, and nothing else does.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/judge/facts.hpp>
#include <memsnap/report/model.hpp>

#include <string>
#include <string_view>

namespace memsnap::report::doc {

std::string phrase(const analysis::Fact& fact);
std::string_view summary(analysis::Pattern pattern);  // "likely ..."
std::string_view fix(analysis::Pattern pattern);
// The fix of an OOM with a full device, for the categories that held it at that moment.
std::string device_full_fix(const std::array<std::int64_t, analysis::category_count>& category_bytes,
                            const analysis::Facts& evidence);
std::string_view phrase(analysis::Advice advice);
std::string_view meaning(analysis::Verdict verdict);

// Facts as people read them (bullets of sentences) and as machines do ({"fact", values...,
// "text"}).
Node facts(std::string key, const analysis::Facts& facts, std::string label = {});
// The advice of a verdict.
Node advice(std::string key, const std::vector<analysis::Advice>& advice, std::string label = {});
// The likely cause, its fix and the facts it rests on; JSON null when there is none.
Node diagnosis(const analysis::Diagnosis& diagnosis, std::string key = "diagnosis");
// yes / no / unknown, for people, with the first fact.
std::string answer_text(analysis::Answer answer, const analysis::Facts& evidence);

}  // namespace memsnap::report::doc
