// The snapshot loader (pickle and JSON), then everything `info` does with a snapshot and
// both of its formats.
#include "fuzz_target.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/snapshot/load.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    if (!snapshot::looks_like_snapshot(input)) return;  // text: the stats target's
    capture::Capture capture{"fuzz.pickle", snapshot::load_snapshot_bytes(input, "fuzz.pickle")};
    analysis::AnalysisOptions options;
    options.top = 0;
    const auto result = analysis::info(capture, options);
    for (const auto format : {report::Format::text, report::Format::json})
        (void)report::render(result, format, {});
}
