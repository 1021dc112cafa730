#pragma once
// Internal: pieces every JSON writer shares. Documents keep keys in reading order
// (schema_version and kind first), and invalid UTF-8 from input files is replaced, never fatal.

#include <memsnap/analysis/diff/diff_model.hpp>
#include <memsnap/analysis/judge/diagnosis.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/stats/range.hpp>
#include <memsnap/util/steps.hpp>

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>

namespace memsnap::report::json {

using Json = nlohmann::ordered_json;

// Whole numbers print as integers ("growth exact to the byte"), fractions as doubles.
Json number(double value);
Json optional_number(const std::optional<double>& value);
Json frame(const std::string& filename, std::int64_t line, const std::string& name);
Json frame(const analysis::FrameText& f);
Json site_frame(const analysis::SiteKey& site);
Json diagnosis(const analysis::Diagnosis& d);  // null when empty
// Representative stacks, their frames looked up in `table`.
Json stacks(const std::vector<analysis::RepresentativeStack>& stacks, const std::vector<analysis::FrameText>& table);
// What was live at a moment of a trace: {"categories": {...}, "sites": [...]}.
Json usage(const analysis::MomentUsage& usage);
// One explained out-of-memory event (trace and info).
Json oom(const analysis::OomExplanation& oom, const std::vector<analysis::FrameText>& table);
Json range(ByteRange r);
Json optional_range(const std::optional<ByteRange>& r);
Json same_process(const analysis::SameProcess& same);  // true, false or null
// A new document: {"schema_version": 1, "kind": kind}.
Json document(std::string_view kind);
// What every diff document says first: the two files, the steps, and whether both come
// from one process.
void diff_header(Json& doc, const std::string& before, const std::string& after, const util::Steps& steps,
                 const analysis::SameProcess& same);
// The document as text: 2-space indent, trailing newline.
std::string dump(const Json& doc);
// The same, with the array under `key` (a top-level key holding an empty array) written
// from `count` elements made one at a time: a long list never exists as a document.
void dump(const Json& doc, std::string_view key, std::size_t count, const std::function<Json(std::size_t)>& element,
          const std::function<void(std::string_view)>& sink);

}  // namespace memsnap::report::json
