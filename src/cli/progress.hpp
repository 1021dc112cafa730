#pragma once
// Reading a capture with its progress shown on a terminal.

#include <memsnap/capture/capture.hpp>
#include <memsnap/pickle/limits.hpp>

#include <cstdint>
#include <string>

namespace memsnap::cli {

// Reads one capture. For a terminal, standard error shows the progress (bytes and rate) of a
// snapshot over 64 MiB being read, and of a gzip or zstd file over 8 MiB being decompressed
// (bytes of the compressed file consumed), on one line rewritten in place and cleared at the
// end. Files read at once (diff's two) share the line: one file by name, several as a sum.
capture::Capture load_with_progress(const capture::InputName& input, const pickle::Limits& limits, std::uint64_t limit,
                                    const stats::TableSink& tables = {});

}  // namespace memsnap::cli
