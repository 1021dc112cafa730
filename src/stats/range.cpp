#include <memsnap/stats/range.hpp>

namespace memsnap::stats {

bool is_byte_metric(std::string_view key) {
    return key.find("_bytes") != std::string_view::npos || key == "max_split_size";
}

}  // namespace memsnap::stats
