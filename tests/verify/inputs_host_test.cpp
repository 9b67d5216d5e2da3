// The generator's host twin: Philox known answers, value properties, and the
// exactness of the bit-level conversions everything else builds on.

#include "verify/inputs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "util/error.hpp"
#include "verify/philox.hpp"

namespace lp {

// What ctest shows in parameterised test names instead of a byte dump.
inline void PrintTo(DType t, std::ostream* os) { *os << dtype_name(t); }

namespace {

TEST(Philox, KnownAnswersFromRandom123) {
  // kat_vectors of Random123 (also what cuRAND's curand_Philox4x32_10 returns).
  const Philox4x32 zero = philox4x32_10(Philox4x32{{0, 0, 0, 0}}, 0, 0);
  EXPECT_EQ(zero.v[0], 0x6627e8d5u);
  EXPECT_EQ(zero.v[1], 0xe169c58du);
  EXPECT_EQ(zero.v[2], 0xbc57ac4cu);
  EXPECT_EQ(zero.v[3], 0x9b00dbd8u);
  const Philox4x32 ones = philox4x32_10(Philox4x32{{~0u, ~0u, ~0u, ~0u}}, ~0u, ~0u);
  EXPECT_EQ(ones.v[0], 0x408f276du);
  EXPECT_EQ(ones.v[1], 0x41c83b0eu);
  EXPECT_EQ(ones.v[2], 0xa20bc7c6u);
  EXPECT_EQ(ones.v[3], 0x6d5451fdu);
  const Philox4x32 pi = philox4x32_10(Philox4x32{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u,
                                      0x299f31d0u);
  EXPECT_EQ(pi.v[0], 0xd16cfe09u);
  EXPECT_EQ(pi.v[1], 0x94fdccebu);
  EXPECT_EQ(pi.v[2], 0x5001e420u);
  EXPECT_EQ(pi.v[3], 0x24126ea1u);
}

class Generated : public testing::TestWithParam<DType> {};

TEST_P(Generated, NonZeroBothSignsWithinTheRange) {
  const DType t = GetParam();
  for (const ValueRange range : {k_activation_range, k_weight_range}) {
    const float lo = round_to(t, range.lo);
    const float hi = round_to(t, range.hi);
    int negative = 0;
    for (std::uint64_t i = 0; i < 100000; ++i) {
      const float v = bits_to_float(t, generated_bits(t, range, 12345, tensor_id::lora_b(1), i));
      ASSERT_NE(v, 0.0f) << i;
      ASSERT_GE(std::fabs(v), lo) << i;
      ASSERT_LE(std::fabs(v), hi) << i;
      negative += v < 0.0f ? 1 : 0;
    }
    EXPECT_NEAR(negative, 50000, 1000) << "signs are fair coin flips";
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Generated, testing::Values(DType::f32, DType::bf16, DType::f16),
                         [](const testing::TestParamInfo<DType>& param_info) { return std::string(dtype_name(param_info.param)); });

TEST(Generated, PureFunctionOfSeedTensorAndIndex) {
  const auto v = [](std::uint64_t seed, std::uint32_t tensor, std::uint64_t index) {
    return generated_bits(DType::f32, k_activation_range, seed, tensor, index);
  };
  EXPECT_EQ(v(1, tensor_id::x, 5), v(1, tensor_id::x, 5));
  EXPECT_NE(v(1, tensor_id::x, 5), v(2, tensor_id::x, 5));
  EXPECT_NE(v(1, tensor_id::x, 5), v(1, tensor_id::buf, 5));
  EXPECT_NE(v(1, tensor_id::x, 5), v(1, tensor_id::x, 6));
  EXPECT_NE(v(1, tensor_id::x, 5), v(1, tensor_id::x, 5 + (std::uint64_t{1} << 32)));
  // Pinned, so a change of the generator (and of every reproducer's inputs) is deliberate.
  EXPECT_EQ(v(0, tensor_id::x, 0), 0x3F93BC72u);  // +1.15419: magnitude and sign from one Philox block
}

TEST(Generated, TensorIdsAreDistinct) {
  EXPECT_NE(tensor_id::lora_a(0), tensor_id::lora_b(0));
  EXPECT_NE(tensor_id::lora_a(2), tensor_id::lora_a(1));
  for (const std::uint32_t id : {tensor_id::x, tensor_id::buf, tensor_id::y_in}) {
    for (std::int64_t s = 0; s < 3; ++s) {
      EXPECT_NE(id, tensor_id::lora_a(s));
      EXPECT_NE(id, tensor_id::lora_b(s));
    }
  }
}

TEST(ValidateRange, RejectsRangesThatRoundToZeroOrInfinity) {
  EXPECT_NO_THROW(validate_range(DType::f16, k_activation_range));
  EXPECT_NO_THROW(validate_range(DType::bf16, k_weight_range));
  try {
    validate_range(DType::f16, ValueRange{1e-9f, 1e-8f});
    FAIL() << "a range below fp16's smallest subnormal was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in fp16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(validate_range(DType::f16, ValueRange{1.0f, 1e6f}), Error);
  EXPECT_THROW(validate_range(DType::f32, ValueRange{2.0f, 1.0f}), Error);
}

TEST(Dtype, HalfDecodingIsExactForEveryPattern) {
  for (std::uint32_t p = 0; p <= 0xFFFFu; ++p) {
    const float ours_f16 = bits_to_float(DType::f16, p);
    const float cuda_f16 = __half2float(__half(__half_raw{static_cast<unsigned short>(p)}));
    if (std::isnan(cuda_f16)) {
      ASSERT_TRUE(std::isnan(ours_f16)) << p;
    } else {
      ASSERT_EQ(u32_from_float(ours_f16), u32_from_float(cuda_f16)) << p;
    }
    ASSERT_EQ(float_to_bits(DType::f16, ours_f16), std::isnan(ours_f16) ? 0x7FFFu : p) << p;
    const float ours_bf16 = bits_to_float(DType::bf16, p);
    ASSERT_EQ(float_to_bits(DType::bf16, ours_bf16), std::isnan(ours_bf16) ? 0x7FFFu : p) << p;
  }
}

TEST(Dtype, RoundingIsToNearestEven) {
  // bf16 around 1: ulp 2^-7. Ties go to the even mantissa.
  EXPECT_EQ(float_to_bits(DType::bf16, 1.0f + 0.00390625f), 0x3F80u);
  EXPECT_EQ(float_to_bits(DType::bf16, 1.0078125f + 0.00390625f), 0x3F82u);
  EXPECT_EQ(float_to_bits(DType::bf16, std::nextafter(1.0f + 0.00390625f, 2.0f)), 0x3F81u);
  // fp16 around 1: ulp 2^-10.
  EXPECT_EQ(float_to_bits(DType::f16, 1.0f + 0.00048828125f), 0x3C00u);
  EXPECT_EQ(float_to_bits(DType::f16, 65520.0f), 0x7C00u) << "overflow rounds to infinity";
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(unit_roundoff(DType::bf16), 1.0 / 256.0);
  EXPECT_EQ(unit_roundoff(DType::f16), 1.0 / 2048.0);
}

}  // namespace
}  // namespace lp
