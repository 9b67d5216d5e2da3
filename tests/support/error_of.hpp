#pragma once
// Test helper: what a call throws, for tests that pin error messages.

#include <optional>
#include <string>

#include "util/error.hpp"

namespace lp::test_support {

/// The `E` that `f()` throws, or nullopt when it returns (any other exception
/// propagates and fails the test).
template <class E = Error, class F>
std::optional<E> thrown_by(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e;
  }
  return std::nullopt;
}

/// The message (what()) of the `E` that `f()` throws, or `none` when it returns.
template <class E = Error, class F>
std::string error_of(F&& f, const std::string& none = "") {
  const std::optional<E> e = thrown_by<E>(f);
  return e ? std::string(e->what()) : none;
}

}  // namespace lp::test_support
