// The device generator against its host twin, and the properties every input must
// have: no zeros, both signs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpu_fixture.hpp"
#include "families/device.hpp"
#include "host_model.hpp"
#include "test_problems.hpp"
#include "verify/case_buffers.hpp"
#include "verify/inputs.hpp"
#include "verify/poison.hpp"

namespace lp::test {
namespace {

// Device tensor `name` equals the host twin's bits, and has no zero and both signs.
void expect_tensor(const char* name, DType t, const std::vector<std::byte>& device,
                   const std::vector<std::uint32_t>& host) {
  ASSERT_EQ(device.size(), host.size() * dtype_size(t)) << name;
  std::size_t negative = 0;
  std::size_t mismatched = 0;
  for (std::size_t i = 0; i < host.size(); ++i) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, device.data() + i * dtype_size(t), dtype_size(t));
    mismatched += bits != host[i] ? 1 : 0;
    const float v = bits_to_float(t, bits);
    ASSERT_NE(v, 0.0f) << name << "[" << i << "] is zero";
    ASSERT_TRUE(std::isfinite(v)) << name << "[" << i << "]";
    negative += v < 0.0f ? 1 : 0;
  }
  EXPECT_EQ(mismatched, 0u) << name << ": device and host twin differ";
  EXPECT_GT(negative, 0u) << name << " has no negative element";
  EXPECT_LT(negative, host.size()) << name << " has no positive element";
}

TEST_F(VerifyGpu, GeneratedInputsMatchTheHostTwinBitForBit) {
  for (const DType w : {DType::bf16, DType::f16}) {
    const Problem linear = make_problem(Op::lora_linear, w, 77, 16, {64, 32, 48}, 96, 3, true, 11);
    CaseBuffers b = make_case_buffers(linear, build_lora_metadata(linear.lora_of, linear.num_loras), stream());
    const HostInputs host = generate_host_inputs(linear);
    expect_tensor("x", w, bytes(b.x), host.x);
    expect_tensor("y_in", w, bytes(b.y_in), host.y_in);
    for (std::size_t s = 0; s < 3; ++s) {
      expect_tensor("lora_a", w, bytes(b.lora_a[s]), host.lora_a[s]);
      expect_tensor("lora_b", w, bytes(b.lora_b[s]), host.lora_b[s]);
    }
  }
  for (const DType in : {DType::f32, DType::bf16, DType::f16}) {
    const Problem expand = make_problem(Op::expand, DType::bf16, 300, 64, {128}, 0, 1, false, 12, in);
    CaseBuffers b = make_case_buffers(expand, build_lora_metadata(expand.lora_of, expand.num_loras), stream());
    expect_tensor("buf", in, bytes(b.buf), generate_host_inputs(expand).buf);
  }
}

TEST_F(VerifyGpu, MetadataIsUploadedAsInt32) {
  const Problem p = make_problem(Op::expand, DType::bf16, 50, 16, {64}, 0, 4, false, 3);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  CaseBuffers b = make_case_buffers(p, m, stream());
  EXPECT_EQ(download<std::int32_t>(b.lora_of, stream()), p.lora_of);
  EXPECT_EQ(download<std::int32_t>(b.lora_ids, stream()), m.lora_ids);
  EXPECT_EQ(download<std::int32_t>(b.num_tokens_per_lora, stream()), m.num_tokens_per_lora);
  EXPECT_EQ(download<std::int32_t>(b.lora_token_start_loc, stream()), m.lora_token_start_loc);
  EXPECT_EQ(download<std::int32_t>(b.token_indices_sorted_by_lora_ids, stream()), m.token_indices_sorted_by_lora_ids);
}

TEST_F(VerifyGpu, ResetOutputWritesThePreLaunchState) {
  Problem p = make_problem(Op::expand, DType::f16, 10, 16, {32}, 0, 1, false, 4);
  CaseBuffers b = make_case_buffers(p, build_lora_metadata(p.lora_of, p.num_loras), stream());
  reset_output(p, b, stream());
  EXPECT_EQ(download<std::uint16_t>(b.y, stream()), std::vector<std::uint16_t>(320, k_poison_f16));

  p.add_inputs = true;
  b = make_case_buffers(p, build_lora_metadata(p.lora_of, p.num_loras), stream());
  reset_output(p, b, stream());
  EXPECT_EQ(bytes(b.y), bytes(b.y_in));

  Problem shrink = make_problem(Op::shrink, DType::bf16, 10, 16, {32}, 32, 1, false, 4);
  shrink.split_k = 2;
  b = make_case_buffers(shrink, build_lora_metadata(shrink.lora_of, shrink.num_loras), stream());
  reset_output(shrink, b, stream());
  EXPECT_EQ(download<std::uint32_t>(b.buf, stream()), std::vector<std::uint32_t>(160, 0u));
  shrink.split_k = 1;
  reset_output(shrink, b, stream());
  EXPECT_EQ(download<std::uint32_t>(b.buf, stream()), std::vector<std::uint32_t>(160, k_poison_f32));
}

}  // namespace
}  // namespace lp::test
