#pragma once
// The zstd magic numbers, for telling a zstd file by its start and walking its skippable frames.

#include <zstd.h>

#include <cstdint>
#include <string_view>

namespace memsnap::io::detail {

inline std::uint32_t little_endian_32(std::string_view bytes) {
    std::uint32_t value = 0;
    for (std::size_t i = 4; i-- > 0;) value = value << 8 | static_cast<unsigned char>(bytes[i]);
    return value;
}

inline bool skippable_magic(std::uint32_t magic) {
    return (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

}  // namespace memsnap::io::detail
