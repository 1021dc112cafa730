#pragma once
// Storage for many short strings: copied into large blocks, so each costs its length and not
// a string object and a heap allocation. Views stay valid for the arena's life.

#include <memory>
#include <string_view>
#include <vector>

namespace memsnap::util {

class TextArena {
  public:
    std::string_view store(std::string_view text);
    std::size_t bytes() const { return bytes_; }

  private:
    static constexpr std::size_t kBlock = 64 * 1024;
    std::vector<std::unique_ptr<char[]>> blocks_;
    std::size_t used_ = kBlock;  // in the last block; full: none yet
    std::size_t bytes_ = 0;
};

}  // namespace memsnap::util
