#include <memsnap/util/text_arena.hpp>

#include <algorithm>

namespace memsnap::util {

std::string_view TextArena::store(std::string_view text) {
    if (text.empty()) return {};
    bytes_ += text.size();
    if (text.size() > kBlock / 4) {
        // A long string gets a block of its own, placed before the open one so that it stays open.
        auto own = std::make_unique<char[]>(text.size());
        std::copy(text.begin(), text.end(), own.get());
        const std::string_view stored(own.get(), text.size());
        blocks_.insert(blocks_.empty() ? blocks_.end() : blocks_.end() - 1, std::move(own));
        return stored;
    }
    if (kBlock - used_ < text.size()) {
        blocks_.push_back(std::make_unique<char[]>(kBlock));
        used_ = 0;
    }
    char* at = blocks_.back().get() + used_;
    std::copy(text.begin(), text.end(), at);
    used_ += text.size();
    return {at, text.size()};
}

}  // namespace memsnap::util
