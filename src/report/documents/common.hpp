#pragma once
// Internal: the pieces several documents share: sites, frames, stacks, diagnoses, what was
// live at a moment, an out-of-memory event, lists of sentences.

#include <memsnap/analysis/judge/comparability.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/sites/site_rules.hpp>
#include <memsnap/analysis/sites/stacks.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/report/model.hpp>
#include <memsnap/util/steps.hpp>

#include <string>
#include <vector>

namespace memsnap::report::doc {

Value site(const analysis::SiteKey& site);
Value frame(const analysis::FrameText& frame);
// A site as JSON has always had it: frame, user_code, compiled_graph; the frame alone for people.
void add_site(Node& record, const analysis::SiteKey& site, bool headline = true);
// One representative stack: its numbers for machines, its frames under `label` for people.
// `shown` false: for machines only (an unchanged stack says nothing to people).
Node stack(const analysis::RepresentativeStack& stack, const std::vector<analysis::FrameText>& table, std::string label,
           bool shown = true);
// What the representative stacks leave out, `unit` naming their blocks and `group` one of
// them: machines get the counts, people a line when there is any.
void add_stacks_not_shown(Node& record, const analysis::StacksNotShown& rest, std::string_view unit,
                          std::string_view group);
// Sentences as bullets under `label` (none shown when empty and `label` is empty).
Node sentences(std::string key, const std::vector<std::string>& lines, std::string label = {});
// Categories and sites live at one moment of a trace.
void add_usage(Node& parent, const analysis::MomentUsage& usage);
// One out-of-memory event explained; `when` says when it happened, for people.
// `peak`: the usage the report showed as the peak, when one was; an OOM holding the same says so
// rather than listing it again.
Node oom(const analysis::OomExplanation& oom, const std::vector<analysis::FrameText>& table, std::string when,
         const analysis::MomentUsage* peak = nullptr);
// How comparable the captures are: one process, the same workload, a known order, each with
// the facts that decided; and whether behaviour is judged.
Node comparability(const analysis::Comparability& comparability);
// People's lines: same process, same workload, and the order when the captures contradict it.
void comparability_lines(Node& root, const analysis::Comparability& comparability);
// A diff's comparability: people's lines, schema 1's same_process and its evidence, and the
// comparability object.
void pair_comparability(Node& root, const analysis::Comparability& comparability);
// The first lines' facts (OOMs elsewhere, a higher peak, caveats), for people before the rest.
Node headline(const analysis::Facts& facts);
// The event that brought allocated bytes to a peak; null when the trace begins at its peak.
Value reached_by_event(const analysis::Peak& p);
// A peak of allocated memory and what held it (the shape of trace's "peak"); null when none.
Node peak(std::string key, const std::optional<analysis::Peak>& peak, std::string label);
// What a peak's breakdown is worth where its trace does not match its snapshot (the sites live
// at it do not add up to it, or allocations the trace never frees are not blocks of the
// snapshot); none where it does.
std::optional<std::string> peak_caveat(const analysis::Peak& p);

// "100 → 500 (400 steps, from file names)" or "unknown".
std::string steps_text(const util::Steps& steps);
// "0, 1", or "none".
std::string device_list(const std::vector<int>& devices);
// A whole number that may be unknown (-1 and below).
Value time_us(std::int64_t us);
// "▁▂▃▄▅▆▇█" bars of the values, lowest to highest; more than 60 values are shown as the
// highest of each of 60 buckets.
std::string sparkline(const std::vector<std::int64_t>& values, std::int64_t floor = 0);
// Counts with runs written once: "2×31", "0×3 1 0×414".
std::string run_lengths(const std::vector<std::int64_t>& counts);
// A list of whole numbers, for machines.
Node numbers(std::string key, const std::vector<std::int64_t>& values);
// "1 allocation", "6 allocations".
std::string counted(std::int64_t n, std::string_view noun);

}  // namespace memsnap::report::doc
