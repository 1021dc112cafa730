#pragma once
// Captures as people share them: gzip (.gz) and zstd (.zst) files, and the HTML pages of
// PyTorch's _memory_viz.py (trace_plot, segment_plot), which carry the snapshot pickle as
// base64 in the page's JSON. unwrap() gives the bytes inside, or nothing for a plain file.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memsnap::io {

enum class Wrapping { none, gzip, zstd, html };
Wrapping wrapping_of(std::string_view head);
std::string_view to_string(Wrapping wrapping);

// Told how many bytes of the compressed input decompression has consumed, about every MiB.
using ConsumedFn = std::function<void(std::uint64_t consumed)>;

// The bytes inside `bytes`, or nullopt when it is not wrapped. Decompression stops at
// `max_output` bytes: past it the file is refused as a likely decompression bomb. Throws
// Error (input) naming `name` (with the byte offset, where there is one) for a damaged file.
std::optional<std::string> unwrap(std::string_view bytes, const std::string& name, std::uint64_t max_output,
                                  const ConsumedFn& consumed = {});

// The names of the snapshots a newer _memory_viz.py page lists in local_files, in order
// (unwrap reads the first); "" for an entry without one.
std::vector<std::string> page_snapshot_names(std::string_view page);

// How much a compressed file of `size` bytes may grow: 64 times, and at least 64 MiB, within
// --max-input. Real captures compress 5 to 20 times.
std::uint64_t unwrap_limit(std::uint64_t size, std::uint64_t max_input);

}  // namespace memsnap::io
