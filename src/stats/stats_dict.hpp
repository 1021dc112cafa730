#pragma once
// Reader for torch.cuda.memory_stats() dumps: a JSON file of the flat dict, the nested form
// (memory_stats_as_nested_dict), or a Python dict / OrderedDict repr printed in a log, with
// any text around it. One small literal parser covers JSON and the Python repr subset.

#include <memsnap/stats/capture.hpp>

#include <deque>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

// Every dict in `text` that holds memory_stats keys (`<name>.<pool>.<metric>` or oversize_*),
// in file order, values exact. A dict wrapped in other keys ({"cuda:1": {...}}) is found too;
// a trailing integer in the wrapping key is taken as the device. A dict that breaks off
// keeps the values read so far plus a warning naming the line. Never throws.
std::deque<StatsTable> find_stats_dicts(std::string_view text, const std::string& file);

}  // namespace memsnap::stats
