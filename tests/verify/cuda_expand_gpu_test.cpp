// The whole verify layer on the device, end to end, with the plain CUDA expand as
// the kernel under test: clean passes with margin, a skipped tile and the
// HGMMA-hazard numerics are caught. This is the check to run on the H200 before
// the Triton launcher exists.

#include <gtest/gtest.h>

#include <cstdio>

#include "cuda/stream.hpp"
#include "families/device.hpp"
#include "families/family.hpp"
#include "gpu_fixture.hpp"
#include "test_problems.hpp"
#include "verify/case_buffers.hpp"
#include "cuda_expand.hpp"
#include "verify/reference.hpp"
#include "verify/stats.hpp"
#include "model/tolerance.hpp"

namespace lp::test {
namespace {

class CudaExpandEndToEnd : public VerifyGpu {
 protected:
  // One repeat: fresh pre-launch state, launch, compare on the device.
  CompareMetrics run(const Problem& p, const LoraMetadata& m, CaseBuffers& b, const TileShape& launch_tile,
                     ExpandFault fault, const TileShape& compare_tile, double* kernel_ms = nullptr) {
    reset_output(p, b, stream());
    const double ms = time_on_stream(stream(), [&] { launch_cuda_expand(p, m, b, launch_tile, fault, stream()); });
    if (kernel_ms != nullptr) {
      *kernel_ms = ms;
    }
    const Tolerance tol = tolerance_for(p);
    CompareSpec spec;
    spec.dtype = output_dtype(p);
    spec.atol = tol.atol;
    spec.rtol = tol.rtol;
    spec.tile = compare_tile;
    spec.unwritten_measurable = unwritten_measurable(p);
    const CompareMetrics metrics = compare_on_device(compare_layout(p), spec, b.y, b.reference, b.lora_of,
                                                     stream());
    std::printf("%s, CUDA expand fault=%s: %s\n", describe(p).c_str(), std::string(expand_fault_name(fault)).c_str(),
                metrics.summary().c_str());
    return metrics;
  }
};

TEST_F(CudaExpandEndToEnd, CleanKernelPassesWithMarginOverRepeats) {
  const Problem p = make_problem(Op::expand, DType::bf16, 384, 64, {4096}, 0, 1, false, 41);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  const double reference_ms = compute_reference(p, m, b, cublas(), stream());
  FailureRate rate;
  double kernel_ms = 0.0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    const CompareMetrics metrics = run(p, m, b, TileShape{64, 128}, ExpandFault::none, TileShape{64, 128}, &kernel_ms);
    EXPECT_TRUE(metrics.passed()) << metrics.summary();
    EXPECT_LE(metrics.worst_dev_over_tolerance, 0.5) << metrics.summary();
    ASSERT_TRUE(metrics.unwritten.has_value());
    EXPECT_EQ(*metrics.unwritten, 0u);
    EXPECT_EQ(metrics.elements, 384u * 4096u);
    EXPECT_EQ(metrics.total_tiles, 6u * 32u);
    rate.runs += 1;
    rate.failures += metrics.passed() ? 0 : 1;
  }
  EXPECT_EQ(rate.failures, 0u);
  EXPECT_EQ(rate.upper_bound_95(), 1.0) << "3 clean runs bound nothing below 1 (rule of three)";
  const CaseTiming timing{kernel_ms, reference_ms, compulsory_bytes(p, m), std::nullopt};
  std::printf("timing: CUDA expand %.3f ms, cuBLAS reference %.3f ms, %llu bytes, %.1f GB/s\n", kernel_ms,
              reference_ms, static_cast<unsigned long long>(compulsory_bytes(p, m)), timing.bandwidth_gbps().value());
  EXPECT_GT(timing.bandwidth_gbps().value(), 0.0);
}

TEST_F(CudaExpandEndToEnd, CleanMultiSliceAddInputsWithTokensWithoutLora) {
  const Problem p = make_problem(Op::expand, DType::bf16, 300, 32, {256, 128, 192}, 0, 3, true, 42);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  static_cast<void>(compute_reference(p, m, b, cublas(), stream()));
  const CompareMetrics metrics = run(p, m, b, TileShape{64, 64}, ExpandFault::none, TileShape{64, 64});
  EXPECT_TRUE(metrics.passed()) << metrics.summary();
  EXPECT_LE(metrics.worst_dev_over_tolerance, 0.5) << metrics.summary();
  EXPECT_FALSE(metrics.unwritten.has_value()) << "ADD_INPUTS: y holds y_in, unwritten is not measurable";
  EXPECT_EQ(metrics.untouched_rows_written, 0u);
  EXPECT_EQ(metrics.untouched_elements, static_cast<std::uint64_t>(300 - m.live_tokens()) * 576u);
  EXPECT_GT(metrics.untouched_elements, 0u);
}

TEST_F(CudaExpandEndToEnd, CleanFp16FromFp32AndFromFp16) {
  for (const DType in : {DType::f32, DType::f16}) {
    const Problem p = make_problem(Op::expand, DType::f16, 200, 128, {512}, 0, 2, false, 43, in);
    const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
    CaseBuffers b = make_case_buffers(p, m, stream());
    static_cast<void>(compute_reference(p, m, b, cublas(), stream()));
    const CompareMetrics metrics = run(p, m, b, TileShape{32, 128}, ExpandFault::none, TileShape{32, 128});
    EXPECT_TRUE(metrics.passed()) << metrics.summary();
    EXPECT_LE(metrics.worst_dev_over_tolerance, 0.5) << metrics.summary();
  }
}

TEST_F(CudaExpandEndToEnd, SkippedTileIsCaughtAsUnwritten) {
  const Problem p = make_problem(Op::expand, DType::bf16, 300, 64, {512}, 0, 1, false, 44);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  static_cast<void>(compute_reference(p, m, b, cublas(), stream()));
  const CompareMetrics metrics = run(p, m, b, TileShape{64, 128}, ExpandFault::skip_tile, TileShape{64, 128});
  EXPECT_FALSE(metrics.passed());
  ASSERT_TRUE(metrics.unwritten.has_value());
  EXPECT_EQ(*metrics.unwritten, 64u * 128u) << "exactly the skipped tile";
  EXPECT_EQ(metrics.mismatches, 64u * 128u);
  EXPECT_EQ(metrics.nan, 0u) << "poison is counted as unwritten, not as NaN";
  EXPECT_EQ(metrics.failing_tiles, 1u);
  ASSERT_TRUE(metrics.first_bad.has_value());
  EXPECT_EQ(metrics.first_bad->token, 0);
  EXPECT_EQ(metrics.first_bad->column, 0);
  EXPECT_EQ(metrics.first_bad->actual_bits, 0xFFA5u);
}

TEST_F(CudaExpandEndToEnd, ReinterpretedPairsAreCaughtEverywhere) {
  const Problem p = make_problem(Op::expand, DType::bf16, 384, 64, {1024}, 0, 1, false, 45);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  static_cast<void>(compute_reference(p, m, b, cublas(), stream()));
  const CompareMetrics metrics = run(p, m, b, TileShape{64, 128}, ExpandFault::reinterpret_pairs, TileShape{64, 128});
  EXPECT_FALSE(metrics.passed());
  EXPECT_GE(metrics.mismatches, metrics.elements * 9 / 10)
      << "garbage operands: nearly every element must be wrong; " << metrics.summary();
  EXPECT_EQ(metrics.unwritten, 0u) << "every element was written, just wrongly";
  EXPECT_EQ(metrics.failing_tiles, metrics.total_tiles);
  EXPECT_GT(metrics.nan + metrics.inf + (metrics.max_abs_dev > 1e6 ? 1u : 0u), 0u)
      << "the field symptom: NaN, Inf or values far beyond any real output; " << metrics.summary();
}

TEST_F(CudaExpandEndToEnd, NoLaunchMeansEverythingUnwritten) {
  const Problem p = make_problem(Op::expand, DType::bf16, 100, 16, {256}, 0, 1, false, 46);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  static_cast<void>(compute_reference(p, m, b, cublas(), stream()));
  reset_output(p, b, stream());
  CompareSpec spec;
  spec.dtype = DType::bf16;
  spec.atol = 1.0;
  spec.rtol = 1.0;
  spec.tile = TileShape{64, 128};
  const CompareMetrics metrics = compare_on_device(compare_layout(p), spec, b.y, b.reference, b.lora_of,
                                                   stream());
  EXPECT_EQ(metrics.unwritten, 100u * 256u);
  EXPECT_EQ(metrics.failing_tiles, metrics.total_tiles);
  EXPECT_EQ(metrics.total_tiles, 2u * 2u);
}

TEST_F(CudaExpandEndToEnd, RefusesWhatItCannotDo) {
  Problem p = make_problem(Op::expand, DType::bf16, 10, 16, {32}, 0, 1, false, 47, DType::bf16);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  EXPECT_THROW(launch_cuda_expand(p, m, b, TileShape{16, 16}, ExpandFault::reinterpret_pairs, stream()), Error)
      << "pairs of fp32 bits need an fp32 input";
  EXPECT_THROW(launch_cuda_expand(p, m, b, TileShape{0, 16}, ExpandFault::none, stream()), Error);
}

}  // namespace
}  // namespace lp::test
