#pragma once
// The reader of text captures: torch.cuda.memory_summary() tables and memory_stats() dicts
// wherever they sit in a file (logs, notebooks, READMEs).

#include <memsnap/stats/capture.hpp>

#include <string>
#include <string_view>

namespace memsnap::stats {

// Detects and parses memory_summary tables or memory_stats dicts in `text` (tables win when a
// file holds both; the dicts are then mentioned in a warning). `file` names the input in
// errors and warnings.
// Throws memsnap::Error (ErrorKind::input) "no memory_summary table or memory_stats dict found"
// when there is neither.
StatsCapture read_stats_text(std::string_view text, const std::string& file);

}  // namespace memsnap::stats
