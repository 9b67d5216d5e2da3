// The device generator against its host twin, and the properties every input must
// have: no zeros, both signs.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gpu_fixture.hpp"
#include "families/device.hpp"
#include "families/fp8/fp8.hpp"
#include "model/value_range.hpp"
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

namespace lp::test {
namespace {

// An FP8 operand on the device: its fp8e4m3 bits are the generator's, its scales the
// host twin's powers of two, and its dequantized copy is exactly q * scale of its block.
void expect_fp8_operand(const char* name, const Fp8Operand& o, ValueRange range, std::uint64_t seed,
                        std::uint32_t tensor, DType deq, const std::vector<std::byte>& q,
                        const std::vector<std::byte>& scales, const std::vector<std::byte>& dequantized) {
  const auto n = static_cast<std::size_t>(o.batch * o.rows * o.cols);
  ASSERT_EQ(q.size(), n) << name;
  // Block-wise weights carry two padding rows of N groups (fp8_device.cpp scale_bytes).
  const std::int64_t padding = !o.activation && o.group > 0 ? 2 * ((o.cols + o.group - 1) / o.group) : 0;
  ASSERT_EQ(scales.size(), static_cast<std::size_t>(o.scales() + padding) * sizeof(float)) << name;
  ASSERT_EQ(dequantized.size(), n * dtype_size(deq)) << name;
  const std::int64_t row_groups = (o.rows + o.group_rows() - 1) / o.group_rows();
  const std::int64_t col_groups = (o.cols + o.group_cols() - 1) / o.group_cols();
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto bits = static_cast<std::uint32_t>(q[i]);
    wrong += bits != generated_bits(DType::e4m3, range, seed, tensor, i) ? 1 : 0;
    const auto col = static_cast<std::int64_t>(i) % o.cols;
    const auto row = static_cast<std::int64_t>(i) / o.cols % o.rows;
    const auto batch = static_cast<std::int64_t>(i) / (o.cols * o.rows);
    const auto block = static_cast<std::size_t>((batch * row_groups + row / o.group_rows()) * col_groups +
                                                col / o.group_cols());
    float scale = 0.0F;
    std::memcpy(&scale, scales.data() + block * sizeof(float), sizeof scale);
    wrong += scale != fp8_scale_value(seed, tensor, block) ? 1 : 0;
    std::uint32_t deq_bits = 0;
    std::memcpy(&deq_bits, dequantized.data() + i * dtype_size(deq), dtype_size(deq));
    const float expected = bits_to_float(DType::e4m3, bits) * scale;
    wrong += bits_to_float(deq, deq_bits) != expected || expected == 0.0F ? 1 : 0;
  }
  EXPECT_EQ(wrong, 0U) << name << ": the device's fp8 operand, scales or dequantized copy differ from the host twin";
}

TEST_F(VerifyGpu, Fp8OperandsScalesAndDequantizedCopiesMatchTheHostTwin) {
  for (const std::int32_t group : {0, 128}) {
    Problem shrink = make_problem(Op::shrink, DType::bf16, 40, 32, {384}, 384, 2, false, 5);
    shrink.op = Op::shrink_fp8;
    shrink.scale_group = group;
    family_of(Op::shrink_fp8).shape(shrink);
    CaseBuffers s = make_case_buffers(shrink, build_lora_metadata(shrink.lora_of, shrink.num_loras), stream());
    expect_fp8_operand("x", fp8_activation(shrink), k_activation_range, 5, tensor_id::x, DType::bf16,
                       bytes(s.fp8_activation), bytes(s.activation_scale), bytes(s.x));
    expect_fp8_operand("A", fp8_weights(shrink), k_weight_range, 5, tensor_id::lora_a(0), DType::bf16,
                       bytes(s.fp8_weights), bytes(s.weight_scale), bytes(s.lora_a.at(0)));
    Problem expand = make_problem(Op::expand, DType::f16, 40, 32, {384}, 0, 3, true, 6);
    expand.op = Op::expand_fp8;
    expand.scale_group = group;
    family_of(Op::expand_fp8).shape(expand);
    CaseBuffers e = make_case_buffers(expand, build_lora_metadata(expand.lora_of, expand.num_loras), stream());
    expect_fp8_operand("buf", fp8_activation(expand), k_activation_range, 6, tensor_id::buf, DType::f32,
                       bytes(e.fp8_activation), bytes(e.activation_scale), bytes(e.buf));
    expect_fp8_operand("B", fp8_weights(expand), k_weight_range, 6, tensor_id::lora_b(0), DType::f16,
                       bytes(e.fp8_weights), bytes(e.weight_scale), bytes(e.lora_b.at(0)));
  }
}

}  // namespace
}  // namespace lp::test
