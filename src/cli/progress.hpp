#pragma once
// Reading a capture with its progress shown on a terminal.

#include <memsnap/capture/capture.hpp>
#include <memsnap/pickle/limits.hpp>

#include <cstdint>
#include <string>

namespace memsnap::cli {

// Reads one capture. A pickle over 64 MiB read for a terminal shows its progress on standard
// error (bytes read and rate), one line rewritten in place and cleared at the end.
capture::Capture load_with_progress(const capture::InputName& input, const pickle::Limits& limits, std::uint64_t limit);

}  // namespace memsnap::cli
