// The snapshot loader (pickle and JSON), then everything `info` and `trace` do with a
// snapshot, in every format they write.
#include "fuzz_target.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/analysis/trace/trace.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/error.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    if (!snapshot::looks_like_snapshot(input)) return;  // text: the stats target's
    capture::Capture capture{"fuzz.pickle", snapshot::load_snapshot_bytes(input, "fuzz.pickle")};
    analysis::AnalysisOptions options;
    options.top = 0;
    const auto result = analysis::info(capture, options);
    for (const auto format : {report::Format::text, report::Format::json}) (void)report::render(result, format, {});
    const auto& snap = std::get<snapshot::Snapshot>(capture.content);
    analysis::TraceOptions trace_options;
    trace_options.device_memory = std::int64_t{80} << 30;
    const auto trace = analysis::analyze_trace(snap, options, trace_options);  // a capture without a trace throws
    for (const auto format :
         {report::Format::text, report::Format::json, report::Format::markdown, report::Format::csv})
        (void)report::render(trace, format, {});
}
