// The FP8 families (src/families/fp8, docs/problem.md "FP8 w8a8 shrink and expand"):
// their fixed dtypes, rules, scale layouts and tolerance, and the e4m3 conversions and
// scales their inputs are made of (model/dtype.hpp, verify/inputs.hpp host twins).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "families/family.hpp"
#include "families/fp8/fp8.hpp"
#include "model/value_range.hpp"
#include "util/error.hpp"
#include "verify/inputs.hpp"

namespace lp {
namespace {

Problem fp8_problem(Op op, std::int32_t group) {
  Problem p;
  p.op = op;
  p.num_tokens = 8;
  p.rank = 64;
  p.slice_hidden = {4096};
  p.hidden_in = 4096;
  p.weight_dtype = DType::bf16;
  p.add_inputs = op == Op::expand_fp8;
  p.scale = op == Op::shrink_fp8 ? 0.5F : 1.0F;
  p.scale_group = group;
  p.lora_of.assign(8, 0);
  family_of(op).shape(p);
  return p;
}

TEST(Fp8Families, ShapeFixesTheOperandDtypes) {
  const Problem shrink = fp8_problem(Op::shrink_fp8, 0);
  EXPECT_EQ(shrink.input_dtype, DType::e4m3);
  EXPECT_EQ(shrink.weight_dtype, DType::e4m3) << "A is fp8e4m3: there is no W";
  EXPECT_EQ(output_dtype(shrink), DType::f32);
  const Problem expand = fp8_problem(Op::expand_fp8, 128);
  EXPECT_EQ(expand.input_dtype, DType::e4m3);
  EXPECT_EQ(expand.weight_dtype, DType::bf16) << "W is y's dtype; B is fp8e4m3";
  EXPECT_EQ(output_dtype(expand), DType::bf16);
  EXPECT_NO_THROW(validate(shrink));
  EXPECT_NO_THROW(validate(expand));
  EXPECT_EQ(family_of(Op::expand_fp8).traits().fixed_input_dtype, DType::e4m3);
  EXPECT_FALSE(family_of(Op::expand_fp8).traits().register_a_remedies) << "its A is never cast in registers";
  EXPECT_NE(describe(expand).find("fp8e4m3->bf16 add_inputs g128"), std::string::npos) << describe(expand);
  EXPECT_NE(describe(shrink).find("fp8e4m3->fp32 per-tensor"), std::string::npos) << describe(shrink);
}

TEST(Fp8Families, RulesRefuseWhatTheKernelsDoNotTake) {
  for (const Op op : {Op::shrink_fp8, Op::expand_fp8}) {
    Problem two_slices = fp8_problem(op, 0);
    two_slices.slice_hidden = {4096, 4096};
    EXPECT_THROW(validate(two_slices), Error) << op_name(op) << ": the embedded FP8 kernels take one slice";
    Problem odd_group = fp8_problem(op, 96);
    EXPECT_THROW(validate(odd_group), Error) << "a scale group is 0 or a power of two";
    Problem amplified = fp8_problem(op, 0);
    amplified.amplify = 2;
    EXPECT_THROW(validate(amplified), Error) << "no register-A wgmma to amplify";
    Problem bf16_input = fp8_problem(op, 0);
    bf16_input.input_dtype = DType::bf16;
    EXPECT_THROW(validate(bf16_input), Error);
  }
  Problem expand = fp8_problem(Op::expand, 0);
  expand.input_dtype = DType::f32;
  expand.slice_hidden = {4096};
  EXPECT_NO_THROW(validate(expand));
  expand.scale_group = 128;
  EXPECT_THROW(validate(expand), Error) << "only the FP8 families take scales";
  Problem shrink_w = fp8_problem(Op::shrink_fp8, 0);
  shrink_w.weight_dtype = DType::bf16;
  EXPECT_THROW(validate(shrink_w), Error) << "the FP8 shrink's A is fp8e4m3";
}

TEST(Fp8Families, ScaleLayoutsAreVllms) {
  const Problem shrink = fp8_problem(Op::shrink_fp8, 0);
  EXPECT_EQ(fp8_activation(shrink).scales(), 1) << "one activation scale per tensor";
  EXPECT_EQ(fp8_weights(shrink).scales(), 1) << "one weight scale per adapter (L = 1)";
  const Problem block = fp8_problem(Op::shrink_fp8, 128);
  EXPECT_EQ(fp8_activation(block).scales(), 8 * 32) << "[T, cdiv(H, 128)]";
  EXPECT_EQ(fp8_weights(block).scales(), 1 * 1 * 32) << "[L, cdiv(R, 128), cdiv(H, 128)]";
  Problem expand = fp8_problem(Op::expand_fp8, 128);
  expand.num_loras = 3;
  EXPECT_EQ(fp8_activation(expand).scales(), 8) << "[T, cdiv(R, 128)]";
  EXPECT_EQ(fp8_weights(expand).scales(), 3 * 32) << "[L, cdiv(H, 128), cdiv(R, 128)]";
  EXPECT_EQ(dequantized_dtype(expand, true), DType::f32);
  EXPECT_EQ(dequantized_dtype(expand, false), DType::bf16);
  EXPECT_EQ(dequantized_dtype(shrink, true), DType::bf16);
}

TEST(Fp8Families, ToleranceAddsTheFp8AccumulationToTheirOwn) {
  const Tolerance shrink = tolerance_for(fp8_problem(Op::shrink_fp8, 0));
  const Tolerance plain = fp32_output_tolerance(4096.0, 0.5, 1);
  ASSERT_EQ(shrink.atol_terms.size(), plain.atol_terms.size() + 1);
  EXPECT_EQ(shrink.atol_terms.back().name, "fp8_accumulation");
  // ceil(K/32) 2^-13 (4 sigma_acc + 32 a_max b_max) scale, sigma_acc = sqrt(K) rms(a) rms(b),
  // with the generator's ranges [0.25, 2] and [0.02, 0.1] (float-rounded)
  const double rms_a = std::sqrt((8.0 - 0.015625) / (3.0 * 1.75));
  const double rms_b = std::sqrt((0.001 - 0.000008) / (3.0 * 0.08));
  const double per_instruction = 4.0 * 64.0 * rms_a * rms_b + 32.0 * 2.0 * 0.1;
  EXPECT_NEAR(shrink.atol_terms.back().value, 128 * std::ldexp(1.0, -13) * per_instruction * 0.5, 1e-6);
  EXPECT_NEAR(shrink.atol, shrink.margin * (plain.atol / plain.margin + shrink.atol_terms.back().value), 1e-12);
  EXPECT_EQ(shrink.rtol, plain.rtol);
  const Tolerance expand = tolerance_for(fp8_problem(Op::expand_fp8, 128));
  EXPECT_EQ(expand.atol_terms.back().name, "fp8_accumulation");
  EXPECT_GT(expand.atol, w_output_tolerance(WOutputShape{DType::bf16, 64, 0, true, 0, 1.0}).atol);
}

TEST(Fp8Dtype, EveryE4m3ValueRoundTripsAndOverflowSaturates) {
  int finite = 0;
  for (std::uint32_t bits = 0; bits < 256; ++bits) {
    const float v = bits_to_float(DType::e4m3, bits);
    if ((bits & 0x7Fu) == 0x7Fu) {
      EXPECT_TRUE(std::isnan(v)) << bits;
      continue;
    }
    ++finite;
    const std::uint32_t back = float_to_bits(DType::e4m3, v);
    EXPECT_EQ(bits_to_float(DType::e4m3, back), v) << "bits " << bits;
  }
  EXPECT_EQ(finite, 254);
  EXPECT_EQ(bits_to_float(DType::e4m3, 0x7E), 448.0F) << "the largest e4m3fn value";
  EXPECT_EQ(bits_to_float(DType::e4m3, 0x01), std::ldexp(1.0F, -9)) << "the smallest subnormal";
  EXPECT_EQ(round_to(DType::e4m3, 1000.0F), 448.0F) << "saturating, as torch and Triton cast";
  EXPECT_EQ(round_to(DType::e4m3, -1000.0F), -448.0F);
  EXPECT_EQ(dtype_size(DType::e4m3), 1U);
  EXPECT_EQ(parse_dtype("fp8e4m3"), DType::e4m3);
  EXPECT_EQ(dtype_name(DType::e4m3), "fp8e4m3");
  std::uint8_t storage[3] = {0, 0, 0};
  store_bits(DType::e4m3, storage, 1, 0x3Cu);
  EXPECT_EQ(storage[0], 0);
  EXPECT_EQ(load_bits(DType::e4m3, storage, 1), 0x3Cu);
}

TEST(Fp8Inputs, ScalesArePowersOfTwoAndDequantizationIsExact) {
  std::set<float> seen;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const float s = fp8_scale_value(48590, tensor_id::x, i);
    seen.insert(s);
    EXPECT_EQ(s, fp8_scale_value(48590, tensor_id::x, i)) << "a pure function of (seed, tensor, index)";
  }
  EXPECT_EQ(seen, (std::set<float>{0.125F, 0.25F, 0.5F, 1.0F}));
  int differ = 0;
  for (std::uint64_t i = 0; i < 64; ++i) {
    differ += fp8_scale_value(48590, tensor_id::x, i) != fp8_scale_value(48591, tensor_id::x, i) ? 1 : 0;
  }
  EXPECT_GT(differ, 16) << "another seed draws other scales";
  // Every generated weight and activation, times any scale, is exact in the reference's dtypes.
  for (const ValueRange range : {k_activation_range, k_weight_range}) {
    for (std::uint64_t i = 0; i < 2048; ++i) {
      const float q = bits_to_float(DType::e4m3, generated_bits(DType::e4m3, range, 7, tensor_id::lora_a(0), i));
      ASSERT_NE(q, 0.0F);
      for (const float s : seen) {
        for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
          EXPECT_EQ(round_to(t, q * s), q * s) << q << " x " << s << " in " << dtype_name(t);
        }
      }
    }
  }
}

}  // namespace
}  // namespace lp
