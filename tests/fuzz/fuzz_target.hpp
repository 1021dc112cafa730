#pragma once
// What every fuzz target shares: an input error (memsnap::Error) is a correct answer to a
// hostile input; anything else that escapes (another exception, a crash, a sanitizer report)
// is a finding.

#include <memsnap/error.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace memsnap::fuzz {

// The one entry each target defines.
void run_one(std::string_view input);

}  // namespace memsnap::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    try {
        memsnap::fuzz::run_one({reinterpret_cast<const char*>(data), size});
    } catch (const memsnap::Error&) {
        // Refused with a message: what a hostile file should get.
    }
    return 0;
}
