#pragma once
// Reader for torch.cuda.memory_summary() tables wherever they sit in a text file: log or
// container prefixes, indentation, "# " comments, one-line Python reprs with literal "\n",
// abbreviated, cut short or elided tables, notes after rows, several tables per file.
// Rows are found by their label and cells by splitting on '|', never by column offsets.

#include <memsnap/stats/capture.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

// Every table in `text`, in file order: each but the last goes to `sink` as soon as it is
// read; the last is returned (nullopt when there is none), so that the caller can add what it
// learns once the file is read. Never throws for bad cells: what cannot be read becomes a
// warning "FILE:LINE: ..." on the table.
std::optional<StatsTable> find_summary_tables(std::string_view text, const std::string& file, const TableSink& sink);

}  // namespace memsnap::stats
