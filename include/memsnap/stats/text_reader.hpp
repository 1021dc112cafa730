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
// when there is neither. A file that also holds dicts says so on its last table (known only
// once the file is read).
StatsCapture read_stats_text(std::string_view text, const std::string& file);

// The same tables, each handed to `sink` once read and not kept, so that a log of 300 000
// tables costs what the sink keeps of them; returns the kind. Tables come in file order with
// their steps. Throws as read_stats_text does.
CaptureKind read_stats_tables(std::string_view text, const std::string& file, const TableSink& sink);

}  // namespace memsnap::stats
