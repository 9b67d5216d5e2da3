#pragma once
// Overflow-checked integer arithmetic for numbers a user controls (config ranges,
// case counts, memory estimates): a result that does not fit is nullopt, never a
// wrapped value and never undefined behaviour. GCC and Clang builtins do the work.

#include <optional>
#include <type_traits>

namespace lp {

/// a * b, or nullopt when the product does not fit in T.
template <typename T>
[[nodiscard]] constexpr std::optional<T> checked_mul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out{};
  if (__builtin_mul_overflow(a, b, &out)) {
    return std::nullopt;
  }
  return out;
}

/// a + b, or nullopt when the sum does not fit in T.
template <typename T>
[[nodiscard]] constexpr std::optional<T> checked_add(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T out{};
  if (__builtin_add_overflow(a, b, &out)) {
    return std::nullopt;
  }
  return out;
}

/// a * b, clamped to T's largest value when it does not fit (unsigned T: for
/// estimates that are compared with a limit, where "too large" is the answer).
template <typename T>
[[nodiscard]] constexpr T saturating_mul(T a, T b) {
  static_assert(std::is_unsigned_v<T>);
  return checked_mul(a, b).value_or(static_cast<T>(~T{0}));
}

/// a + b, clamped to T's largest value when it does not fit.
template <typename T>
[[nodiscard]] constexpr T saturating_add(T a, T b) {
  static_assert(std::is_unsigned_v<T>);
  return checked_add(a, b).value_or(static_cast<T>(~T{0}));
}

}  // namespace lp
