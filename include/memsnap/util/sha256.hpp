#pragma once
// SHA-256 (FIPS 180-4), for the HTML view's Content-Security-Policy: a script is allowed by
// the base64 of its digest ('sha256-…').

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace memsnap::util {

std::array<std::uint8_t, 32> sha256(std::string_view data);
std::string base64(const std::uint8_t* data, std::size_t size);

}  // namespace memsnap::util
