#include <memsnap/analysis/sites/stats_tables.hpp>
#include <memsnap/error.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace memsnap::analysis {

std::vector<int> known_devices(const std::vector<const stats::StatsTable*>& tables) {
    std::set<int> out;
    for (const auto* t : tables)
        if (t->device) out.insert(*t->device);
    return {out.begin(), out.end()};
}

std::vector<const stats::StatsTable*> tables_of(const stats::StatsCapture& capture, std::optional<int> device) {
    std::vector<const stats::StatsTable*> out;
    for (const auto& t : capture.tables)
        if (!device || !t.device || *t.device == *device) out.push_back(&t);
    if (out.empty()) {
        std::vector<const stats::StatsTable*> all;
        for (const auto& t : capture.tables) all.push_back(&t);
        const auto devices = known_devices(all);
        throw input_error(fmt::format("--device {}: the tables are of device{} {} only", *device,
                                      devices.size() == 1 ? "" : "s", fmt::join(devices, ", ")),
                          capture.file);
    }
    return out;
}

}  // namespace memsnap::analysis
