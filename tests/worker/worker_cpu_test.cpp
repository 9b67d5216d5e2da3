// The worker's host-side logic that needs no GPU: the device-memory estimate.

#include <gtest/gtest.h>

#include <limits>

#include "worker/execute.hpp"

namespace lp::worker {
namespace {

TEST(Estimate, TheLargestCaseTheAxesAllowIsCountedExactly) {
  // Every axis at its maximum (tokens 2^20, hidden 131072 x 3 slices, rank 4096, 1024 adapters):
  // the estimate must be of the order of its largest tensor, not a wrapped small number.
  Problem p;
  p.op = lp::Op::lora_linear;
  p.num_tokens = std::int64_t{1} << 20;
  p.rank = 4096;
  p.slice_hidden = {131072, 131072, 131072};
  p.hidden_in = 131072;
  p.num_loras = 1024;
  p.input_dtype = lp::DType::f16;
  p.weight_dtype = lp::DType::f16;
  const std::uint64_t bytes = estimate_device_bytes(p);
  const long double y_bytes = 3.0L * (1 << 20) * 3 * 131072 * 2;  // y, y_in and the reference
  EXPECT_GT(static_cast<long double>(bytes), y_bytes);
  EXPECT_LT(bytes, std::uint64_t{1} << 50);
}

TEST(Estimate, SizesBeyondTheAxesSaturateInsteadOfWrapping) {
  // A hand-edited job could carry any int64: 2^40 tokens x 2^40 x 3 slices wraps a plain uint64 product.
  Problem p;
  p.op = lp::Op::expand;
  p.num_tokens = std::int64_t{1} << 40;
  p.rank = std::int64_t{1} << 40;
  p.slice_hidden = {std::int64_t{1} << 40, std::int64_t{1} << 40, std::int64_t{1} << 40};
  p.weight_dtype = lp::DType::bf16;
  EXPECT_EQ(estimate_device_bytes(p), std::numeric_limits<std::uint64_t>::max());
}

}  // namespace
}  // namespace lp::worker
