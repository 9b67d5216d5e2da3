// The poison patterns cannot come out of a conversion or arithmetic, exhaustively
// where the space is small enough (all 2^16 half values, all 2^24 fp32 NaNs).

#include "verify/poison.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "model/dtype.hpp"

namespace lp {
namespace {

constexpr std::array<DType, 2> k_half_types = {DType::bf16, DType::f16};

TEST(Poison, PatternsAreNegativeSignallingNans) {
  EXPECT_EQ(poison_bits(DType::f32), 0xFFB1DEADu);
  EXPECT_EQ(poison_bits(DType::bf16), 0xFFA5u);
  EXPECT_EQ(poison_bits(DType::f16), 0xFDADu);
  // fp32: exponent all ones, quiet bit 22 clear, payload non-zero.
  EXPECT_EQ(k_poison_f32 & 0x7F800000u, 0x7F800000u);
  EXPECT_EQ(k_poison_f32 & 0x00400000u, 0u);
  EXPECT_NE(k_poison_f32 & 0x003FFFFFu, 0u);
  // bf16: exponent bits 14..7 all ones, quiet bit 6 clear, payload non-zero.
  EXPECT_EQ(k_poison_bf16 & 0x7F80u, 0x7F80u);
  EXPECT_EQ(k_poison_bf16 & 0x0040u, 0u);
  EXPECT_NE(k_poison_bf16 & 0x003Fu, 0u);
  // fp16: exponent bits 14..10 all ones, quiet bit 9 clear, payload non-zero.
  EXPECT_EQ(k_poison_f16 & 0x7C00u, 0x7C00u);
  EXPECT_EQ(k_poison_f16 & 0x0200u, 0u);
  EXPECT_NE(k_poison_f16 & 0x01FFu, 0u);
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    EXPECT_TRUE(std::isnan(bits_to_float(t, poison_bits(t)))) << dtype_name(t);
  }
}

TEST(Poison, Fp32PoisonIsNoWidenedHalfValue) {
  // Widening keeps the low 16 (bf16) / 13 (fp16) bits zero; the poison's are not.
  EXPECT_NE(k_poison_f32 & 0xFFFFu, 0u);
  EXPECT_NE(k_poison_f32 & 0x1FFFu, 0u);
  for (std::uint32_t p = 0; p <= 0xFFFFu; ++p) {
    for (const DType t : k_half_types) {
      ASSERT_NE(u32_from_float(bits_to_float(t, p)), k_poison_f32) << dtype_name(t) << " " << p;
    }
  }
}

TEST(Poison, NoHalfValueConvertsToAPoison) {
  // Every bf16 and fp16 pattern, widened and narrowed to either half type.
  for (std::uint32_t p = 0; p <= 0xFFFFu; ++p) {
    for (const DType from : k_half_types) {
      const float f = bits_to_float(from, p);
      for (const DType to : k_half_types) {
        ASSERT_NE(float_to_bits(to, f), poison_bits(to)) << dtype_name(from) << " " << p << " -> " << dtype_name(to);
      }
    }
  }
}

TEST(Poison, NoFp32NanConvertsToAHalfPoison) {
  // A finite or infinite float converts to a finite or infinite half; only NaNs
  // can become NaNs, so all 2^24 - 2 fp32 NaN patterns cover every way in.
  for (std::uint32_t sign = 0; sign < 2; ++sign) {
    for (std::uint32_t mantissa = 1; mantissa < (1u << 23); ++mantissa) {
      const float nan = float_from_u32((sign << 31) | 0x7F800000u | mantissa);
      for (const DType to : k_half_types) {
        const std::uint32_t bits = float_to_bits(to, nan);
        ASSERT_NE(bits, poison_bits(to)) << std::hex << mantissa;
        ASSERT_TRUE(std::isnan(bits_to_float(to, bits)));
      }
    }
  }
}

TEST(Poison, FiniteFloatsNeverConvertToNan) {
  // The other half of the argument above, over every exponent with a spread of
  // mantissas (including the largest, which rounds to infinity, not NaN).
  for (std::uint32_t exponent = 0; exponent < 0xFFu; ++exponent) {
    for (std::uint32_t mantissa : {0u, 1u, 0x1FFFu, 0x2000u, 0x7FFFu, 0x8000u, 0x8001u, 0x3FFFFFu, 0x7FFFFFu}) {
      for (std::uint32_t sign = 0; sign < 2; ++sign) {
        const float f = float_from_u32((sign << 31) | (exponent << 23) | mantissa);
        for (const DType to : k_half_types) {
          ASSERT_FALSE(std::isnan(bits_to_float(to, float_to_bits(to, f)))) << f;
        }
      }
    }
  }
}

TEST(Poison, ArithmeticOnHalfValuesNeverYieldsAPoison) {
  // Sums, products and FMAs of every half value with a spread of others, in fp32
  // (the kernel's accumulator) and rounded to each half type. On the host a NaN
  // result is quiet (x86); on the GPU it is the canonical 0x7FFFFFFF: neither is
  // a signalling poison.
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> others = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, 65504.0f, -65520.0f, 1e-8f, 3e38f, -3e38f,
                               inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                               float_from_u32(0x7F800001u) /* an fp32 signalling NaN */};
  for (std::uint32_t p = 0; p < 64; ++p) {
    others.push_back(bits_to_float(DType::bf16, p * 1021u + 7u));
  }
  for (std::uint32_t p = 0; p <= 0xFFFFu; ++p) {
    for (const DType from : k_half_types) {
      const float a = bits_to_float(from, p);
      for (const float b : others) {
        for (const float r : {a + b, a * b, std::fma(a, b, 1.0f), std::fma(a, b, a)}) {
          ASSERT_NE(u32_from_float(r), k_poison_f32);
          for (const DType to : k_half_types) {
            ASSERT_NE(float_to_bits(to, r), poison_bits(to));
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace lp
