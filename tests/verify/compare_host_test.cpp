// Metric arithmetic of the comparison, through its host twin (the same per-element
// code the device kernel runs) on small host-built buffers.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "util/error.hpp"
#include "verify/compare.hpp"
#include "verify/compare_element.hpp"
#include "verify/inputs.hpp"
#include "verify/poison.hpp"

namespace lp {
namespace {

constexpr std::uint16_t k_bf16_one = 0x3F80;
constexpr std::uint16_t k_bf16_one_plus_ulp = 0x3F81;  // 1.0078125
constexpr std::uint16_t k_bf16_two = 0x4000;
constexpr std::uint16_t k_bf16_nan = 0x7FFF;
constexpr std::uint16_t k_bf16_inf = 0x7F80;

std::span<const std::byte> bytes_of(const std::vector<std::uint16_t>& v) { return std::as_bytes(std::span(v)); }
std::span<const std::byte> bytes_of(const std::vector<std::uint32_t>& v) { return std::as_bytes(std::span(v)); }

// y [T = 4, H = {4, 2}] in bf16; token 1 has no LoRA.
struct Planted {
  const CompareLayout layout = CompareLayout::expand_output(4, {4, 2});
  const std::vector<std::int32_t> lora_of = {0, -1, 1, 0};
  std::vector<std::uint16_t> expected;
  std::vector<std::uint16_t> actual;
  CompareSpec spec;

  static std::size_t at(int token, int column) { return static_cast<std::size_t>(token * 6 + column); }

  Planted() {
    expected.assign(24, k_bf16_one);
    for (int c = 0; c < 6; ++c) {
      expected[at(1, c)] = k_poison_bf16;  // the reference holds the pre-launch poison in -1 rows
    }
    actual = expected;
    actual[at(0, 1)] = k_bf16_nan;           // NaN
    actual[at(1, 3)] = k_bf16_one;           // a write into the row without LoRA
    actual[at(2, 2)] = k_bf16_two;           // far off: dev 1
    actual[at(2, 4)] = k_bf16_inf;           // Inf (slice 1)
    actual[at(3, 0)] = k_bf16_one_plus_ulp;  // one ulp off: within tolerance
    actual[at(3, 5)] = k_poison_bf16;        // never written
    spec.dtype = DType::bf16;
    spec.atol = 0.0;
    spec.rtol = 1.0 / 64.0;
    spec.tile = TileShape{2, 2};
    spec.unwritten_measurable = true;
  }

  CompareMetrics run() const { return compare_on_host(layout, spec, bytes_of(actual), bytes_of(expected), lora_of); }
};

TEST(CompareHost, RaisingARatioWithoutDividingGivesWhatDividingEveryTimeGives) {
  // raise_ratio divides only when the quotient could exceed the running maximum; its
  // result must be max(cur, safe_div(num, den)) bit for bit, near ties, subnormal and
  // overflowing products included.
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double big = std::numeric_limits<double>::max();
  std::vector<double> values = {0.0, tiny, 3 * tiny, 1e-310, 1e-300, 1e-30, 0.1, 0.3, 1.0, 1.5, 3.0, 1e30, 1e300, big};
  for (double x : std::vector<double>(values)) {
    values.push_back(std::nextafter(x, 0.0));
    values.push_back(std::nextafter(x, big));
  }
  std::uint64_t state = 88172645463325252ull;  // xorshift64: random doubles of every exponent
  for (int i = 0; i < 2000; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    double d;
    const std::uint64_t bits = state & 0x7FEFFFFFFFFFFFFFull;  // positive, finite
    std::memcpy(&d, &bits, sizeof d);
    values.push_back(d);
  }
  std::size_t checked = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    for (std::size_t j = 0; j < values.size(); j += 7) {
      const double num = values[i];
      const double den = values[j];
      // cur: the quotient itself and its neighbours (the ties), and unrelated values.
      const double q = compare_detail::safe_div(num, den);
      for (const double cur : {q, std::nextafter(q, 0.0), std::nextafter(q, big), values[(i + j) % values.size()]}) {
        const double want = q > cur ? q : cur;
        ASSERT_EQ(compare_detail::raise_ratio(cur, num, den), want) << num << " / " << den << " against " << cur;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000000u);
}

// The device kernel adds an element equal to its reference through add_equal_live
// instead of compare_element: it must give the same metrics for every bit pattern.
TEST(CompareHost, AnEqualElementAddedWithoutArithmeticCountsAsCompareElementCountsIt) {
  std::vector<std::uint32_t> patterns;
  for (std::uint32_t b = 0; b < 0x10000u; ++b) {
    patterns.push_back(b);
  }
  for (std::uint32_t i = 0; i < 200000u; ++i) {
    patterns.push_back(generated_bits(DType::f32, ValueRange{-1.0f, 1.0f}, 11, 4, i) * 2654435761u);
  }
  for (const float special : {0.0f, -0.0f, 1e30f, -1e30f, 1.0000001e30f, 3.4e38f, INFINITY, -INFINITY, NAN}) {
    patterns.push_back(u32_from_float(special));
  }
  std::vector<compare_detail::ElementRule> rules;
  for (const DType t : {DType::bf16, DType::f16, DType::f32}) {
    for (const auto& [atol, rtol] : std::vector<std::pair<double, double>>{
             {1e-3, 0.0156}, {0.0, 0.0}, {0.0, INFINITY}, {NAN, 0.01}, {1e-3, -1.0}}) {
      for (const bool poison : {false, true}) {
        compare_detail::ElementRule r;
        r.dtype = t;
        r.atol = atol;
        r.rtol = rtol;
        r.rel_floor = 1e-6;
        r.poison_measurable = poison;
        r.poison = poison_bits(t);
        rules.push_back(r);
      }
    }
  }
  std::size_t fast = 0;
  for (const compare_detail::ElementRule& rule : rules) {
    const std::uint32_t mask = dtype_size(rule.dtype) == 2 ? 0xFFFFu : 0xFFFFFFFFu;
    for (const std::uint32_t pattern : patterns) {
      const std::uint32_t bits = pattern & mask;
      compare_detail::LocalMetrics want;
      want.max_abs_dev = 0.5;
      want.max_rel_dev = 0.25;
      want.worst_dev_over_tolerance = 0.75;
      compare_detail::LocalMetrics got = want;
      const compare_detail::LocalMetrics before = got;
      want.add(compare_detail::compare_element(rule, bits, bits, true), true);
      if (!compare_detail::add_equal_live(rule, bits, got)) {
        ASSERT_EQ(std::memcmp(&got, &before, sizeof got), 0) << "a refused element adds nothing";
        continue;
      }
      ++fast;
      ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0)
          << "bits 0x" << std::hex << bits << " dtype " << dtype_name(rule.dtype) << " atol " << rule.atol << " rtol "
          << rule.rtol;
    }
  }
  EXPECT_GT(fast, patterns.size() * 4) << "the common element takes the short way";
}

TEST(CompareHost, EveryPlantedDefectIsCountedOnce) {
  const Planted p;
  const CompareMetrics m = p.run();
  EXPECT_EQ(m.elements, 18u);
  EXPECT_EQ(m.untouched_elements, 6u);
  EXPECT_EQ(m.nan, 1u);
  EXPECT_EQ(m.inf, 1u);
  ASSERT_TRUE(m.unwritten.has_value());
  EXPECT_EQ(*m.unwritten, 1u);
  EXPECT_EQ(m.untouched_rows_written, 1u);
  EXPECT_EQ(m.mismatches, 4u) << "NaN, Inf, unwritten and the far-off element; the one-ulp one passes";
  EXPECT_EQ(m.reference_nonfinite, 0u);
  EXPECT_DOUBLE_EQ(m.max_abs_dev, 1.0);
  EXPECT_DOUBLE_EQ(m.max_rel_dev, 1.0);
  EXPECT_DOUBLE_EQ(m.worst_dev_over_tolerance, 64.0);
  EXPECT_FALSE(m.passed());
}

TEST(CompareHost, FirstBadElementIsTheFirstInRowMajorOrder) {
  const Planted p;
  const CompareMetrics m = p.run();
  ASSERT_TRUE(m.first_bad.has_value());
  EXPECT_EQ(m.first_bad->index, 1u);
  EXPECT_EQ(m.first_bad->token, 0);
  EXPECT_EQ(m.first_bad->column, 1);
  EXPECT_EQ(m.first_bad->slice, 0);
  EXPECT_EQ(m.first_bad->expected, 1.0);
  EXPECT_TRUE(std::isnan(m.first_bad->actual));
  EXPECT_EQ(m.first_bad->actual_bits, k_bf16_nan);
  EXPECT_FALSE(m.first_bad->untouched_row);
  EXPECT_EQ(m.first_bad->describe(), "token 0, column 1 (slice 0): expected 1 (0x3f80), got nan (0x7fff)");
}

TEST(CompareHost, FailingTilesAreCountedPerSliceByTokenAndColumn) {
  // Tiles 2 tokens x 2 columns: slice 0 (4 columns) has 2 x 2 tiles, slice 1 (2 columns)
  // 2 x 1. Failing: (t0,c1) tile 0; (t1,c3) tile 1; (t2,c2) tile 3; (t2,c4) and
  // (t3,c5) both tile 5 of slice 1.
  const Planted p;
  const CompareMetrics m = p.run();
  EXPECT_EQ(m.total_tiles, 6u);
  EXPECT_EQ(m.failing_tiles, 4u);
}

TEST(CompareHost, WithoutPoisonUnwrittenIsNullNotZero) {
  Planted p;
  p.spec.unwritten_measurable = false;
  const CompareMetrics m = p.run();
  EXPECT_FALSE(m.unwritten.has_value());
  EXPECT_EQ(m.nan, 2u) << "the poison pattern is a NaN like any other when the output was not poisoned";
  EXPECT_EQ(m.mismatches, 4u);
  EXPECT_NE(m.summary().find("unwritten n/a"), std::string::npos) << m.summary();
}

TEST(CompareHost, UntouchedRowWriteCanBeTheFirstBadElement) {
  Planted p;
  p.actual = p.expected;
  p.actual[Planted::at(1, 3)] = 0x4040;  // 3.0 written into the -1 row
  p.actual[Planted::at(2, 0)] = k_bf16_nan;
  const CompareMetrics m = p.run();
  ASSERT_TRUE(m.first_bad.has_value());
  EXPECT_EQ(m.first_bad->token, 1);
  EXPECT_EQ(m.first_bad->column, 3);
  EXPECT_TRUE(m.first_bad->untouched_row);
  EXPECT_EQ(m.first_bad->expected_bits, k_poison_bf16);
  EXPECT_EQ(m.untouched_rows_written, 1u);
  EXPECT_EQ(m.mismatches, 1u);
  EXPECT_FALSE(m.passed());
}

TEST(CompareHost, CleanOutputPasses) {
  Planted p;
  p.actual = p.expected;
  p.actual[Planted::at(3, 0)] = k_bf16_one_plus_ulp;
  const CompareMetrics m = p.run();
  EXPECT_TRUE(m.passed()) << m.summary();
  EXPECT_EQ(m.mismatches, 0u);
  EXPECT_EQ(m.failing_tiles, 0u);
  EXPECT_FALSE(m.first_bad.has_value());
  EXPECT_DOUBLE_EQ(m.max_abs_dev, 0.0078125);
  EXPECT_DOUBLE_EQ(m.worst_dev_over_tolerance, 0.5);
  EXPECT_EQ(m.summary().rfind("PASS", 0), 0u) << m.summary();
}

TEST(CompareHost, ElementExactlyAtTheToleranceStillPasses) {
  Planted p;
  p.actual = p.expected;
  p.actual[Planted::at(0, 0)] = k_bf16_one_plus_ulp;
  p.spec.rtol = 0.0078125;  // tolerance equals the deviation
  const CompareMetrics m = p.run();
  EXPECT_TRUE(m.passed()) << m.summary();
  EXPECT_DOUBLE_EQ(m.worst_dev_over_tolerance, 1.0);
}

// fp32, one slice, one token: expected values near zero.
CompareMetrics compare_f32(const std::vector<std::uint32_t>& actual, const std::vector<std::uint32_t>& expected,
                           double atol, double rtol) {
  const CompareLayout layout = CompareLayout::expand_output(1, {static_cast<std::int64_t>(actual.size())});
  CompareSpec spec;
  spec.dtype = DType::f32;
  spec.atol = atol;
  spec.rtol = rtol;
  spec.tile = TileShape{1, 1};
  const std::vector<std::int32_t> lora_of = {0};
  return compare_on_host(layout, spec, bytes_of(actual), bytes_of(expected), lora_of);
}

std::uint32_t f32(float v) { return u32_from_float(v); }

TEST(CompareHost, RelativeDeviationNearZeroUsesTheFloor) {
  // atol 1e-5, rtol 2^-6: floor = atol / rtol = 6.4e-4. |e| = 0 and 1e-7 fall below it.
  const CompareMetrics m = compare_f32({f32(1e-6f), f32(1.1e-7f), f32(0.0f)}, {f32(0.0f), f32(1e-7f), f32(0.0f)},
                                       1e-5, 1.0 / 64.0);
  EXPECT_TRUE(m.passed()) << m.summary();
  EXPECT_DOUBLE_EQ(m.rel_floor, 6.4e-4);
  EXPECT_NEAR(m.max_rel_dev, 1e-6 / 6.4e-4, 1e-9);
  EXPECT_FALSE(std::isnan(m.max_rel_dev));
  EXPECT_NEAR(m.max_abs_dev, 1e-6, 1e-12);
}

TEST(CompareHost, RelativeDeviationAboveTheFloorIsPlainRelative) {
  const CompareMetrics m = compare_f32({f32(1.01f)}, {f32(1.0f)}, 1e-5, 1.0 / 64.0);
  EXPECT_NEAR(m.max_rel_dev, 0.01, 1e-6);
}

TEST(CompareHost, ZeroToleranceExactMatchIsRatioZeroNotNan) {
  const CompareMetrics m = compare_f32({f32(0.0f), f32(2.0f)}, {f32(0.0f), f32(2.0f)}, 0.0, 0.0);
  EXPECT_TRUE(m.passed()) << m.summary();
  EXPECT_EQ(m.worst_dev_over_tolerance, 0.0);
  EXPECT_EQ(m.max_rel_dev, 0.0);
}

TEST(CompareHost, ZeroToleranceAnyDeviationFailsWithInfiniteRatio) {
  const CompareMetrics m = compare_f32({f32(1.0f)}, {f32(std::nextafter(1.0f, 2.0f))}, 0.0, 0.0);
  EXPECT_FALSE(m.passed());
  EXPECT_TRUE(std::isinf(m.worst_dev_over_tolerance));
}

TEST(CompareHost, NanNeverPassesWhateverTheTolerance) {
  const float inf = std::numeric_limits<float>::infinity();
  const CompareMetrics m = compare_f32({0x7FFFFFFFu, f32(-inf), 0x7FC00000u}, {f32(1.0f), f32(1.0f), f32(1.0f)}, 1e30, 1e30);
  EXPECT_EQ(m.nan, 2u);
  EXPECT_EQ(m.inf, 1u);
  EXPECT_EQ(m.mismatches, 3u);
  EXPECT_FALSE(m.passed());
  EXPECT_EQ(m.max_abs_dev, 0.0) << "deviations are only defined between finite values";
}

TEST(CompareHost, NonFiniteReferenceMakesTheCaseInvalid) {
  const CompareMetrics m = compare_f32({f32(1.0f)}, {0x7FC00000u}, 1.0, 1.0);
  EXPECT_EQ(m.reference_nonfinite, 1u);
  EXPECT_FALSE(m.passed());
  EXPECT_NE(m.summary().find("INVALID"), std::string::npos) << m.summary();
}

TEST(CompareHost, FloorWithoutRtolIsTheSmallestNormal) {
  CompareSpec spec;
  spec.atol = 1.0;
  spec.rtol = 0.0;
  spec.dtype = DType::f16;
  EXPECT_DOUBLE_EQ(spec.rel_floor(), 6.103515625e-05);
  spec.dtype = DType::bf16;
  EXPECT_DOUBLE_EQ(spec.rel_floor(), static_cast<double>(std::numeric_limits<float>::min()));
}

TEST(CompareHost, ShrinkLayoutDecodesSliceTokenRank) {
  // buf [S = 2, T = 3, R = 4] fp32; token 1 has no LoRA and still holds its poison.
  const CompareLayout layout = CompareLayout::shrink_output(2, 3, 4);
  EXPECT_EQ(layout.total_elements(), 24);
  const std::vector<std::int32_t> lora_of = {0, -1, 0};
  std::vector<std::uint32_t> expected(24, f32(0.5f));
  for (int s = 0; s < 2; ++s) {
    for (int r = 0; r < 4; ++r) {
      expected[static_cast<std::size_t>(s * 12 + 4 + r)] = k_poison_f32;
    }
  }
  std::vector<std::uint32_t> actual = expected;
  actual[static_cast<std::size_t>(1 * 12 + 2 * 4 + 3)] = k_poison_f32;  // slice 1, token 2, r 3: unwritten
  actual[static_cast<std::size_t>(1 * 12 + 0 * 4 + 1)] = f32(0.75f);    // slice 1, token 0, r 1: wrong
  CompareSpec spec;
  spec.dtype = DType::f32;
  spec.atol = 1e-3;
  spec.rtol = 1e-6;
  spec.tile = TileShape{2, 2};
  const CompareMetrics m = compare_on_host(layout, spec, bytes_of(actual), bytes_of(expected), lora_of);
  EXPECT_EQ(m.elements, 16u);
  EXPECT_EQ(m.untouched_elements, 8u);
  EXPECT_EQ(m.unwritten, 1u);
  EXPECT_EQ(m.mismatches, 2u);
  ASSERT_TRUE(m.first_bad.has_value());
  EXPECT_EQ(m.first_bad->slice, 1);
  EXPECT_EQ(m.first_bad->token, 0);
  EXPECT_EQ(m.first_bad->column, 1);
  EXPECT_EQ(m.first_bad->describe(), "token 0, column 1 (slice 1): expected 0.5 (0x3f000000), got 0.75 (0x3f400000)");
  // Per slice 2 x 2 tiles of 2 tokens x 2 ranks: (s1,t0,r1) is slice 1's tile 0, (s1,t2,r3) its tile 3.
  EXPECT_EQ(m.total_tiles, 8u);
  EXPECT_EQ(m.failing_tiles, 2u);
}

TEST(CompareHost, ThreeUnequalSlicesMapColumnsToTheirSlice) {
  const CompareLayout layout = CompareLayout::expand_output(2, {3, 1, 2});
  const std::vector<std::int32_t> lora_of = {0, 0};
  std::vector<std::uint16_t> expected(12, k_bf16_one);
  std::vector<std::uint16_t> actual = expected;
  actual[6 + 3] = k_bf16_two;  // token 1, column 3: slice 1's only column
  CompareSpec spec;
  spec.dtype = DType::bf16;
  spec.rtol = 1.0 / 64.0;
  spec.tile = TileShape{1, 2};
  const CompareMetrics m = compare_on_host(layout, spec, bytes_of(actual), bytes_of(expected), lora_of);
  ASSERT_TRUE(m.first_bad.has_value());
  EXPECT_EQ(m.first_bad->slice, 1);
  EXPECT_EQ(m.first_bad->column, 3);
  // Tiles: slice 0 ceil(3/2) = 2 per token, slice 1 1, slice 2 1: 2 tokens x 4.
  EXPECT_EQ(m.total_tiles, 8u);
  EXPECT_EQ(m.failing_tiles, 1u);
}

TEST(CompareHost, SizeMismatchIsAnError) {
  const Planted p;
  const std::vector<std::uint16_t> short_actual(23, k_bf16_one);
  try {
    static_cast<void>(compare_on_host(p.layout, p.spec, bytes_of(short_actual), bytes_of(p.expected), p.lora_of));
    FAIL() << "a short buffer was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "comparison: the actual output has 46 bytes, the layout needs 48 (24 bf16 elements)");
  }
  CompareSpec bad_tile = p.spec;
  bad_tile.tile = TileShape{0, 2};
  EXPECT_THROW(static_cast<void>(compare_on_host(p.layout, bad_tile, bytes_of(p.actual), bytes_of(p.expected), p.lora_of)),
               Error);
}

}  // namespace
}  // namespace lp
