#pragma once
// Internal: an iterator over a container that gives values rather than references (the
// packed trace makes each TraceEvent as it is read). Random access for std::ranges
// algorithms; to the older ones (std::prev, std::lower_bound, ...) an iterator that yields
// values is an input iterator only: use the ranges ones.

#include <compare>
#include <cstddef>
#include <iterator>

namespace memsnap::snapshot::detail {

template <class Container, class Value>
class ValueIterator {
  public:
    using iterator_concept = std::random_access_iterator_tag;
    using iterator_category = std::input_iterator_tag;
    using value_type = Value;
    using difference_type = std::ptrdiff_t;
    using reference = Value;
    struct Arrow {
        Value value;
        const Value* operator->() const { return &value; }
    };
    using pointer = Arrow;

    ValueIterator() = default;
    ValueIterator(const Container* container, std::size_t at) : container_(container), at_(at) {}
    Value operator*() const { return (*container_)[at_]; }
    Arrow operator->() const { return {**this}; }
    Value operator[](difference_type n) const { return (*container_)[at_ + static_cast<std::size_t>(n)]; }
    ValueIterator& operator++() { return ++at_, *this; }
    ValueIterator operator++(int) { return {container_, at_++}; }
    ValueIterator& operator--() { return --at_, *this; }
    ValueIterator operator--(int) { return {container_, at_--}; }
    ValueIterator& operator+=(difference_type n) { return at_ += static_cast<std::size_t>(n), *this; }
    ValueIterator& operator-=(difference_type n) { return at_ -= static_cast<std::size_t>(n), *this; }
    friend ValueIterator operator+(ValueIterator i, difference_type n) { return i += n; }
    friend ValueIterator operator+(difference_type n, ValueIterator i) { return i += n; }
    friend ValueIterator operator-(ValueIterator i, difference_type n) { return i -= n; }
    friend difference_type operator-(const ValueIterator& a, const ValueIterator& b) {
        return static_cast<difference_type>(a.at_) - static_cast<difference_type>(b.at_);
    }
    friend bool operator==(const ValueIterator& a, const ValueIterator& b) { return a.at_ == b.at_; }
    friend auto operator<=>(const ValueIterator& a, const ValueIterator& b) { return a.at_ <=> b.at_; }
    std::size_t index() const { return at_; }

  private:
    const Container* container_ = nullptr;
    std::size_t at_ = 0;
};

}  // namespace memsnap::snapshot::detail
