#include <memsnap/stats/capture.hpp>
#include <memsnap/stats/keys.hpp>

#include <utility>

namespace memsnap::stats {

const ByteRange* tracked_value(const StatsTable& table, std::string_view key) {
    // The counters kept beside `stats`: cudaMallocAsync counts neither.
    for (const auto& [name, counter] : {std::pair{std::string_view(keys::num_ooms), &table.num_ooms},
                                        std::pair{std::string_view(keys::num_alloc_retries), &table.num_alloc_retries}})
        if (key == name) return counter->has_value() && !table.layout.cuda_malloc_async ? &**counter : nullptr;
    const auto at = table.stats.find(key);
    if (at == table.stats.end()) return nullptr;
    const ByteRange* value = &(*at).second;
    if (!table.layout.cuda_malloc_async) return value;
    const bool bytes_now_or_peak =
        key.find("_bytes.all.") != std::string_view::npos && (key.ends_with(".current") || key.ends_with(".peak"));
    const bool tracked = key.starts_with("allocated_bytes.") || key.starts_with("reserved_bytes.");
    if (!bytes_now_or_peak || (!tracked && *value == ByteRange{})) return nullptr;
    return value;
}

}  // namespace memsnap::stats
