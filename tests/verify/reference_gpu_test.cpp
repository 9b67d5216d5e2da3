// The cuBLAS reference against a host float64 reference (host_model.cpp) on small
// shapes covering every path: CAST, ADD_INPUTS, unequal slices, tokens without
// LoRA, shrink with scale and SPLIT_K, lora_linear, fused_moe (gate/up with
// adapters and tokens without one, down with routing weights).

#include <gtest/gtest.h>

#include <ostream>

#include <cstdio>
#include <string>

#include "support/print_name.hpp"
#include "gpu_fixture.hpp"
#include "families/device.hpp"
#include "families/family.hpp"
#include "host_model.hpp"
#include "test_problems.hpp"
#include "verify/case_buffers.hpp"
#include "verify/reference.hpp"
#include "model/tolerance.hpp"

namespace lp::test {
namespace {

struct ReferenceCase {
  std::string name;
  Problem problem;
};

using test_support::PrintTo;  // a case prints as its name

Problem with(Problem p, float scale, std::int32_t split_k) {
  p.scale = scale;
  p.split_k = split_k;
  return p;
}

class ReferenceVsFloat64 : public VerifyGpu, public testing::WithParamInterface<ReferenceCase> {};

TEST_P(ReferenceVsFloat64, AgreesWithinToleranceWithMargin) {
  const Problem& p = GetParam().problem;
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  const double ms = compute_reference(p, m, b, cublas(), stream());
  const std::vector<std::byte> cublas_ref = bytes(b.reference);
  const std::vector<std::byte> host_ref = host_output(p, generate_host_inputs(p), Accumulation::float64);

  const Tolerance tol = tolerance_for(p);
  CompareSpec spec;
  spec.dtype = output_dtype(p);
  spec.atol = tol.atol;
  spec.rtol = tol.rtol;
  spec.tile = TileShape{16, 32};
  spec.unwritten_measurable = unwritten_measurable(p);
  const CompareMetrics metrics =
      compare_on_host(compare_layout(p), spec, cublas_ref, host_ref, row_lora(p));
  std::printf("%s: cuBLAS reference %.3f ms; vs float64: %s\n", describe(p).c_str(), ms, metrics.summary().c_str());
  EXPECT_TRUE(metrics.passed()) << describe(p) << ": " << metrics.summary() << "; " << tol.describe();
  EXPECT_LE(metrics.worst_dev_over_tolerance, 0.5) << describe(p) << ": " << metrics.summary() << "; " << tol.describe();
  EXPECT_EQ(metrics.untouched_rows_written, 0u) << "rows without LoRA must hold the pre-launch state";
  if (metrics.unwritten) {
    EXPECT_EQ(*metrics.unwritten, 0u);
  }
  EXPECT_GT(metrics.elements, 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Paths, ReferenceVsFloat64,
    testing::Values(
        ReferenceCase{"expand_cast_fp32_bf16", make_problem(Op::expand, DType::bf16, 67, 64, {256}, 0, 1, false, 21)},
        ReferenceCase{"expand_cast_fp32_fp16", make_problem(Op::expand, DType::f16, 40, 32, {128}, 0, 1, false, 22)},
        ReferenceCase{"expand_add_inputs_unequal_slices_minus_one",
                      make_problem(Op::expand, DType::bf16, 100, 32, {128, 64, 96}, 0, 3, true, 23)},
        ReferenceCase{"expand_bf16_input_no_cast", make_problem(Op::expand, DType::bf16, 50, 16, {64}, 0, 2, false, 24,
                                                                DType::bf16)},
        ReferenceCase{"expand_fp16_add_inputs", make_problem(Op::expand, DType::f16, 45, 48, {80, 80}, 0, 2, true, 25,
                                                             DType::f16)},
        ReferenceCase{"expand_bf16_input_fp16_weights", make_problem(Op::expand, DType::f16, 30, 16, {64}, 0, 1, false,
                                                                     26, DType::bf16)},
        ReferenceCase{"shrink_scale", with(make_problem(Op::shrink, DType::bf16, 70, 16, {512, 512}, 512, 2, false, 27),
                                           0.5f, 1)},
        ReferenceCase{"shrink_split_k_fp16", with(make_problem(Op::shrink, DType::f16, 33, 32, {256}, 256, 3, false, 28),
                                                  1.0f, 4)},
        ReferenceCase{"lora_linear_bf16_slices_add_inputs",
                      with(make_problem(Op::lora_linear, DType::bf16, 60, 16, {128, 64}, 256, 2, true, 29), 0.25f, 1)},
        ReferenceCase{"lora_linear_fp16", make_problem(Op::lora_linear, DType::f16, 37, 32, {96}, 512, 1, false, 30)},
        ReferenceCase{"fused_moe_gate_up_3_adapters_add_inputs",
                      make_fused_problem(DType::bf16, 50, 3, 8, 2, 16, 256, 64, 2, false, true, 31)},
        ReferenceCase{"fused_moe_down_routed_fp16",
                      make_fused_problem(DType::f16, 40, 1, 16, 4, 32, 128, 96, 1, true, false, 32)}),
    [](const testing::TestParamInfo<ReferenceCase>& param_info) { return param_info.param.name; });

TEST_F(VerifyGpu, ReferenceRejectsAHandleOnAnotherStream) {
  const Problem p = make_problem(Op::expand, DType::bf16, 8, 16, {32}, 0, 1, false, 1);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  const Stream other;
  const CublasHandle elsewhere(other);
  EXPECT_THROW(static_cast<void>(compute_reference(p, m, b, elsewhere, stream())), Error);
}

}  // namespace
}  // namespace lp::test
