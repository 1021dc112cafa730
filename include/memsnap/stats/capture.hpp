#pragma once
// The model of a memory_summary / memory_stats capture: per table, a map from memory_stats key
// names to value ranges, so that summaries and stats dumps compare directly.

#include <memsnap/limits.hpp>
#include <memsnap/stats/range.hpp>
#include <memsnap/stats/stat_map.hpp>

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::stats {

enum class CaptureKind { memory_summary, memory_stats };

// Device indices are CUDA ordinals: a "device ID" past this is not one. A file with tables of
// more devices than kMaxDevices is refused: no machine holds that many.
constexpr int kMaxDevice = static_cast<int>(limits::device_id);
constexpr std::size_t kMaxDevices = limits::summary_devices;
std::string_view to_string(CaptureKind kind);

// How a table was written: the torch generation its rows show, and what was unusual.
struct TableLayout {
    enum class Generation {
        torch_1_9_or_older,  // no Oversize rows
        torch_1_10_to_1_13,  // Oversize rows, no Requested row
        torch_2_0_or_newer,  // a Requested row
        unknown,             // cut before the rows that tell
        memory_stats,        // a memory_stats() dict
    };
    Generation generation = Generation::unknown;
    bool abbreviated = false;        // no per-pool rows
    bool cut = false;                // no closing border
    bool old_units = false;          // KB/MB/GB
    bool cuda_malloc_async = false;  // totals and counts 0 while memory is allocated
    bool nested = false;             // a memory_stats dict inside another
    bool python_repr = false;        // Python's repr rather than JSON
    std::vector<std::string> forks;  // "NPU", "musa": a fork's own summary title
    // As JSON spells it: the generation, then the flags, comma-separated
    // ("torch>=2.0,cudaMallocAsync").
    std::string text() const;
    // The rows tell which torch versions wrote the table (not unknown, not a stats dict).
    bool tells_torch_version() const {
        return generation == Generation::torch_1_9_or_older || generation == Generation::torch_1_10_to_1_13 ||
               generation == Generation::torch_2_0_or_newer;
    }
};

// One memory_summary table or one memory_stats dict found in a file.
struct StatsTable {
    std::optional<int> device;  // from "device ID N"; unknown for headless tables and stats dicts
    std::optional<ByteRange> num_ooms, num_alloc_retries;  // exact when present
    TableLayout layout;
    // memory_stats key → range, e.g. "allocated_bytes.all.current", "oversize_segments.peak".
    // num_ooms / num_alloc_retries are kept in the fields above, not here.
    StatMap stats;
    std::vector<std::string> warnings;  // "FILE:LINE: what could not be read"
    std::size_t line = 0;               // 1-based line where the table starts
    // The step a log line just above the table names ("step 100"; see step_from_text).
    std::optional<std::int64_t> step;
};

// A table's value of `key` as something to judge by, or null. Under cudaMallocAsync the
// allocator tracks only the current and peak bytes; its other cells print 0, which the reader
// keeps exactly as printed, but they are no values: no "0 live allocations", no counter that
// grows from 0. num_ooms and num_alloc_retries are found in their fields, and are none under
// cudaMallocAsync, which counts neither.
const ByteRange* tracked_value(const StatsTable& table, std::string_view key);

// Receives the tables of a file one at a time, in file order (a reader that holds none).
using TableSink = std::function<void(StatsTable&&)>;

struct StatsCapture {
    std::string file;  // as given
    CaptureKind kind = CaptureKind::memory_summary;
    // In file order; several tables form a series. A deque: a long log holds many, and
    // growing it never copies them.
    std::deque<StatsTable> tables;
};

}  // namespace memsnap::stats
