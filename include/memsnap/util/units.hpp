#pragma once
// Byte quantities as people read and write them.

#include <cstdint>
#include <string>
#include <string_view>

namespace memsnap::util {

// "1.50 GiB", "512 B", "-20.00 MiB": binary units, two decimals above bytes.
std::string human_bytes(std::int64_t bytes);
// Same with an explicit sign: "+20.00 MiB", "-512 B", "0 B".
std::string signed_bytes(std::int64_t bytes);
// Parses "10MiB", "10 MB" (binary, as torch prints), "1.5GiB", "4096". Throws Error (usage).
std::int64_t parse_size(std::string_view text);

}  // namespace memsnap::util
