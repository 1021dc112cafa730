#pragma once
// The values of one table by memory_stats key ("allocated_bytes.all.current"), compactly: a
// key of torch's own vocabulary (about 130 of them) costs four bytes; any other (a private
// pool's) is kept as text. Iterates in key order, as a std::map<std::string, ByteRange>
// would. A long log holds thousands of tables, so this is what its memory is made of.

#include <memsnap/stats/range.hpp>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memsnap::stats {

class StatMap {
    struct Entry {
        std::uint32_t key = 0;  // below vocabulary size: a vocabulary key; else extra_[key - size]
        ByteRange range;
    };

  public:
    // The range is a reference into the map, so that `it->second` outlives the iterator.
    using value_type = std::pair<std::string_view, const ByteRange&>;

    class const_iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = StatMap::value_type;
        using difference_type = std::ptrdiff_t;
        using reference = value_type;
        struct Arrow {
            value_type value;
            const value_type* operator->() const { return &value; }
        };
        const_iterator() = default;
        value_type operator*() const { return {map_->key_text(entry_->key), entry_->range}; }
        Arrow operator->() const { return {**this}; }
        const_iterator& operator++() {
            ++entry_;
            return *this;
        }
        const_iterator operator++(int) {
            auto copy = *this;
            ++entry_;
            return copy;
        }
        bool operator==(const const_iterator& other) const { return entry_ == other.entry_; }

      private:
        friend class StatMap;
        const_iterator(const StatMap* map, const Entry* entry) : map_(map), entry_(entry) {}
        const StatMap* map_ = nullptr;
        const Entry* entry_ = nullptr;
    };

    StatMap() = default;
    // From values gathered while a table was read.
    explicit StatMap(const std::map<std::string, ByteRange, std::less<>>& values);

    const_iterator begin() const { return {this, entries_.data()}; }
    const_iterator end() const { return {this, entries_.data() + entries_.size()}; }
    const_iterator find(std::string_view key) const;
    std::size_t count(std::string_view key) const { return find(key) == end() ? 0 : 1; }
    // Throws std::out_of_range, as std::map::at does.
    const ByteRange& at(std::string_view key) const;
    // Sets one value, keeping key order (linear: for tests and small edits, not for readers).
    void set(std::string_view key, ByteRange range);
    std::size_t size() const { return entries_.size(); }
    bool empty() const { return entries_.empty(); }
    void clear() {
        entries_.clear();
        extra_.clear();
    }
    friend bool operator==(const StatMap& a, const StatMap& b);

  private:
    std::string_view key_text(std::uint32_t key) const;
    std::uint32_t key_of(std::string_view text);
    const Entry* lookup(std::string_view key) const;

    std::vector<Entry> entries_;      // in key order
    std::vector<std::string> extra_;  // keys outside the vocabulary
};

}  // namespace memsnap::stats
