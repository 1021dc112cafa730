#pragma once
// The pages of torch 2.0's _memory_viz.py trace_plot (and profile_plot): no pickle inside, but
// `alloc_data = {actions, elements_size, elements_info, suffix_table, string_table,
// initially_allocated}`, which the page's JavaScript replays. memsnap replays it the same way
// into a Snapshot: device 0; alloc and free_completed events in order with their sizes and
// stacks (decoded from the suffix and string tables); no times; the elements live at the end
// as active blocks in one placeholder segment (Segment::placeholder: no reserved memory).

#include <memsnap/pickle/limits.hpp>
#include <memsnap/snapshot/model.hpp>

#include <string>
#include <string_view>

namespace memsnap::snapshot {

// True when an HTML page holds `alloc_data = {` and no base64 snapshot.
bool is_alloc_data_page(std::string_view page);

// Reads such a page; throws Error (input) naming `name` with a byte offset where there is one.
Snapshot read_alloc_data_page(std::string_view page, const std::string& name, const pickle::Limits& limits);

}  // namespace memsnap::snapshot
