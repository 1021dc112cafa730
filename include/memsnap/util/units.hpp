#pragma once
// Byte quantities as people write them on the command line.

#include <cstdint>
#include <string_view>

namespace memsnap::util {

// Parses "10MiB", "10 MB" (binary, as torch prints), "1.5GiB", "4096". Throws Error (usage).
std::int64_t parse_size(std::string_view text);

}  // namespace memsnap::util
