// The memory_summary / memory_stats text reader, then `info` on what it read.
#include "fuzz_target.hpp"

#include <memsnap/analysis/run.hpp>
#include <memsnap/capture/capture.hpp>
#include <memsnap/report/render.hpp>
#include <memsnap/stats/text_reader.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    capture::Capture capture{"fuzz.txt", stats::read_stats_text(input, "fuzz.txt")};
    const auto result = analysis::info(capture, {});
    for (const auto format : {report::Format::text, report::Format::json}) (void)report::render(result, format, {});
}
