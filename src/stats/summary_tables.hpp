#pragma once
// Reader for torch.cuda.memory_summary() tables wherever they sit in a text file: log or
// container prefixes, indentation, "# " comments, one-line Python reprs with literal "\n",
// abbreviated, cut short or elided tables, notes after rows, several tables per file.
// Rows are found by their label and cells by splitting on '|', never by column offsets.

#include <memsnap/stats/capture.hpp>

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

// All tables in `text`, in file order; empty when there is none. Never throws for bad cells:
// what cannot be read becomes a warning "FILE:LINE: ..." on the table.
std::deque<StatsTable> find_summary_tables(std::string_view text, const std::string& file);

}  // namespace memsnap::stats
