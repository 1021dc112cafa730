// The pickle machine alone: any byte string decodes or is refused with an offset. Wrapped
// inputs (gzip, zstd, _memory_viz.py pages) are unwrapped first, as the capture layer does.
#include "fuzz_target.hpp"

#include <memsnap/io/unwrap.hpp>
#include <memsnap/pickle/reader.hpp>

void memsnap::fuzz::run_one(std::string_view input) {
    std::string inner;
    if (auto unwrapped = io::unwrap(input, "fuzz", io::unwrap_limit(input.size(), std::uint64_t{64} << 20))) {
        inner = std::move(*unwrapped);
        input = inner;
    }
    pickle::Document doc(input);
    pickle::decode(doc, pickle::Limits{}, nullptr);
}
