// Checked and saturating arithmetic: the extremes of each type, both signs.

#include "util/checked.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace lp {
namespace {

constexpr std::int64_t k_max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t k_min = std::numeric_limits<std::int64_t>::min();
constexpr std::uint64_t k_umax = std::numeric_limits<std::uint64_t>::max();

TEST(Checked, MultiplicationThatFitsIsExact) {
  EXPECT_EQ(checked_mul<std::int64_t>(std::int64_t{1} << 31, std::int64_t{1} << 31), std::int64_t{1} << 62);
  EXPECT_EQ(checked_mul<std::int64_t>(-4611686018427387904, 2), k_min);
  EXPECT_EQ(checked_mul<std::int64_t>(k_max, 1), k_max);
  EXPECT_EQ(checked_mul<std::int64_t>(k_min, 0), 0);
}

TEST(Checked, MultiplicationThatOverflowsIsNullopt) {
  EXPECT_EQ(checked_mul<std::int64_t>(std::int64_t{1} << 62, 2), std::nullopt);
  EXPECT_EQ(checked_mul<std::int64_t>(-6917529027641081856, 2), std::nullopt);  // the fuzzer's reproducer
  EXPECT_EQ(checked_mul<std::int64_t>(k_min, -1), std::nullopt);
  EXPECT_EQ(checked_mul<std::size_t>(std::size_t{1} << 32, std::size_t{1} << 32), std::nullopt);
}

TEST(Checked, AdditionAtTheEdges) {
  EXPECT_EQ(checked_add<std::int64_t>(k_max - 1, 1), k_max);
  EXPECT_EQ(checked_add<std::int64_t>(k_max, 1), std::nullopt);
  EXPECT_EQ(checked_add<std::int64_t>(k_min, -1), std::nullopt);
  EXPECT_EQ(checked_add<std::int64_t>(k_min, k_max), -1);
  EXPECT_EQ(checked_add<std::int64_t>(4611686018427387905, 4611686018427387904), std::nullopt);
}

TEST(Checked, SaturatingClampsToTheLargestValue) {
  EXPECT_EQ(saturating_mul<std::uint64_t>(k_umax, 2), k_umax);
  EXPECT_EQ(saturating_mul<std::uint64_t>(std::uint64_t{1} << 32, std::uint64_t{1} << 31), std::uint64_t{1} << 63);
  EXPECT_EQ(saturating_add<std::uint64_t>(k_umax, 1), k_umax);
  EXPECT_EQ(saturating_add<std::uint64_t>(k_umax - 1, 1), k_umax);
  EXPECT_EQ(saturating_add<std::uint64_t>(2, 3), 5U);
}

}  // namespace
}  // namespace lp
