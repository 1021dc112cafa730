#pragma once
// The memory_summary / memory_stats tables of one device.

#include <memsnap/stats/capture.hpp>

#include <optional>
#include <vector>

namespace memsnap::analysis {

// The tables of `capture` of options.device (tables without a device stay). Throws Error
// (input) naming the devices the capture holds when none is left.
std::vector<const stats::StatsTable*> tables_of(const stats::StatsCapture& capture, std::optional<int> device);

// The devices the tables name, sorted (tables without a device left out).
std::vector<int> known_devices(const std::vector<const stats::StatsTable*>& tables);

}  // namespace memsnap::analysis
