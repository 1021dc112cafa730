// Unwrapping as people share captures: gzip, zstd (skippable frames too) and the HTML pages
// of _memory_viz.py, then the capture inside read as `info` would. A small output limit
// makes bombs cheap to find.
#include "fuzz_target.hpp"

#include <memsnap/capture/capture.hpp>
#include <memsnap/io/unwrap.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    const auto inside = io::unwrap(input, "fuzz.bin", std::uint64_t{4} << 20);
    if (!inside) return;
    (void)capture::capture_from_bytes(*inside, "fuzz.pickle", {});
}
