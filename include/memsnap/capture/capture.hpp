#pragma once
// A capture as users bring it: a snapshot (pickle or JSON dump) or memory_summary /
// memory_stats text. The content decides which, never the file extension. This is where a
// new capture kind plugs in: a reader here, and a branch in analysis/run.hpp.

#include <memsnap/capture/inputs.hpp>
#include <memsnap/pickle/limits.hpp>
#include <memsnap/snapshot/model.hpp>
#include <memsnap/stats/capture.hpp>

#include <functional>
#include <string>
#include <string_view>
#include <variant>

namespace memsnap::capture {

struct Capture {
    std::string path;  // as given ("-" for standard input)
    std::variant<snapshot::Snapshot, stats::StatsCapture> content;

    bool is_snapshot() const { return std::holds_alternative<snapshot::Snapshot>(content); }
    const snapshot::Snapshot& snapshot() const { return std::get<snapshot::Snapshot>(content); }
    const stats::StatsCapture& stats() const { return std::get<stats::StatsCapture>(content); }
    std::string_view kind_name() const { return is_snapshot() ? "snapshot" : "memory_summary/memory_stats capture"; }
};

// How far reading a capture got, for a progress line. A gzip or zstd file is first
// decompressed (`done` of `total` bytes of the compressed file consumed), then its snapshot
// read (`done` of `total` decompressed bytes); a plain one is only read.
struct ReadProgress {
    enum class Stage { decompressing, reading };
    Stage stage = Stage::reading;
    std::uint64_t done = 0, total = 0;
};
using ProgressFn = std::function<void(const ReadProgress& progress)>;

// Reads the file at `path` ("-" reads standard input; pipes and devices are read up to
// `max_input` bytes). Throws Error (input) naming the file, also when the file changes
// while it is read.
// `progress`, when given, is told about every 1 MiB how far decompression and the snapshot
// reader got (snapshots only: text is read at once).
Capture load_capture(const std::string& path, const pickle::Limits& limits,
                     std::uint64_t max_input = std::uint64_t{8} << 30, const ProgressFn& progress = {});

// The same for a file named or found in a directory: one found there is read only when it is
// a regular file (or a link to one) when opened. With `tables`, a text capture's tables go to
// it one at a time and the capture returned holds none (a series keeps figures, not tables).
Capture load_capture(const InputName& input, const pickle::Limits& limits,
                     std::uint64_t max_input = std::uint64_t{8} << 30, const ProgressFn& progress = {},
                     const stats::TableSink& tables = {});

// The same from bytes in memory; `name` stands for the file in errors. `progress` is told how
// far the snapshot reader got (Stage::reading, of `bytes`).
Capture capture_from_bytes(std::string_view bytes, const std::string& name, const pickle::Limits& limits,
                           const ProgressFn& progress = {}, const stats::TableSink& tables = {});

}  // namespace memsnap::capture
