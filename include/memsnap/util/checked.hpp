#pragma once
// Integer arithmetic that says when it would overflow, instead of wrapping (undefined for
// signed types): sizes and counts come from files anyone can write. The one place memsnap
// checks its arithmetic; callers decide what an overflow is (an input error for sizes read
// from a file, a usage error for an option).

#include <memsnap/error.hpp>

#include <concepts>
#include <optional>
#include <string>
#include <string_view>

namespace memsnap::util {

// An exact intermediate for sums and products of int64 values that are compared, not
// refused (the growth of a series): no sum of 2^64 of them overflows it.
__extension__ using Wide = __int128;

// a + b, a - b, a * b and -a, or nullopt when the result does not fit T. For a comparison
// with another T, value_or(max) is exact: a result that does not fit is past every T.
template <std::integral T>
constexpr std::optional<T> checked_add(T a, T b) {
    T out{};
    if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
    return out;
}

template <std::integral T>
constexpr std::optional<T> checked_sub(T a, T b) {
    T out{};
    if (__builtin_sub_overflow(a, b, &out)) return std::nullopt;
    return out;
}

template <std::integral T>
constexpr std::optional<T> checked_mul(T a, T b) {
    T out{};
    if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
    return out;
}

template <std::integral T>
constexpr std::optional<T> checked_neg(T a) {
    return checked_sub(T{0}, a);
}

// An input error naming `file` and saying that `what` overflowed: for sizes and counts read
// from a file, which no GPU could hold.
[[noreturn]] inline void refuse(std::string_view what, const std::string& file) {
    throw input_error(
        std::string(what) + " overflow 64 bits (past 2^63, which no GPU holds): the file is damaged or crafted", file);
}

// The value, or refuse(what, file).
template <std::integral T>
T or_refuse(std::optional<T> value, std::string_view what, const std::string& file) {
    if (!value) refuse(what, file);
    return *value;
}

}  // namespace memsnap::util
