#pragma once
// Test helper: the LoRA ops computed on the host from the host twin of the input
// generator, with a choice of accumulation. float64 is the "host float64
// reference" the GPU tests hold cuBLAS to; the fp32 orders model how two correct
// fp32 implementations (kernel, cuBLAS) can differ, which is what the tolerance
// must absorb.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/problem.hpp"

namespace lp::test {

/// How dot products are summed.
enum class Accumulation {
  float64,        ///< double accumulation, then fp32 like an accumulator, then the output rounding
  fp32_forward,   ///< fp32 FMA, r (or h) ascending
  fp32_reverse,   ///< fp32 FMA, descending
  fp32_blocked,   ///< fp32 partial sums of 16 products, then summed: tensor-core-like
  /// fp32_blocked with the amplifier's problem.amplify pairs before each block of
  /// 16 (src/ptx/amplify.hpp): acc = (acc - p) + p in fp32, p the block's sum of B x B
  /// (the pairs read B's own values as A). Expand only; other ops use fp32_blocked.
  fp32_amplified,
};

/// Inputs as raw bits (half types in the low 16 bits), generated like the device does.
/// fused_moe: x [x_rows, K], lora_a [L, E, R, K], lora_b [L, E, N, R], y_in [T * top_k, S * N].
struct HostInputs {
  std::vector<std::uint32_t> x;                   ///< [T, H_in]
  std::vector<std::vector<std::uint32_t>> lora_a; ///< per slice [L, R, H_in]
  std::vector<std::vector<std::uint32_t>> lora_b; ///< per slice [L, H_s, R]
  std::vector<std::uint32_t> buf;                 ///< expand input [S, T, R]
  std::vector<std::uint32_t> y_in;                ///< [T, H_tot]
};

/// The inputs of `problem` from its seed (generated_bits, the device generator's twin).
HostInputs generate_host_inputs(const Problem& problem);

/// The output tensor of `problem` as bytes of its output dtype, laid out like the
/// device output; rows of tokens without LoRA hold the pre-launch state (poison,
/// y_in or zero), like CaseBuffers::reference.
std::vector<std::byte> host_output(const Problem& problem, const HostInputs& inputs, Accumulation accumulation);

/// The adapter of each output row, as the comparison takes it: lora_of, or for
/// fused_moe the routing's pair_lora.
std::vector<std::int32_t> row_lora(const Problem& problem);

}  // namespace lp::test
