#pragma once
// Test helper: gtest prints a parameterised test's case (a failure's "where
// GetParam() = ...") by its name, not as a dump of its bytes. A test file brings it
// into the namespace of its case struct, which has a `name`:
//   using lp::test_support::PrintTo;
// (argument-dependent lookup finds it there, and its constraint makes it win over
// gtest's own PrintTo).

#include <concepts>
#include <ostream>
#include <string_view>

namespace lp::test_support {

template <class T>
concept NamedCase = requires(const T& c) {
  { c.name } -> std::convertible_to<std::string_view>;
};

template <NamedCase T>
void PrintTo(const T& c, std::ostream* os) {
  *os << c.name;
}

}  // namespace lp::test_support
