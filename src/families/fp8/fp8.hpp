#pragma once
// The FP8 families (docs/problem.md "FP8 w8a8 shrink and expand"): vLLM's w8a8 LoRA
// shrink and expand (vllm/lora/ops/triton_ops/lora_{shrink,expand}_fp8_op.py, 0.33.0
// and 0.34.0), whose operands are fp8e4m3 with fp32 scales, per tensor or block-wise
// (Problem::scale_group). One slice each: the embedded sets build no more.

#include <cstdint>

#include "families/family.hpp"

namespace lp {

/// x [T, H] and A [L, R, H] fp8e4m3 -> buf [T, R] fp32, times scale.
[[nodiscard]] const KernelFamily& shrink_fp8_family() noexcept;
/// buf [T, R] and B [L, H, R] fp8e4m3 -> y [T, H] in W (+ y with add_inputs).
[[nodiscard]] const KernelFamily& expand_fp8_family() noexcept;

/// How one FP8 operand [batch, rows, cols] (cols = K) is scaled: per tensor, one scale
/// per batch entry; block-wise (group g > 0), an activation has one per row and g
/// columns, weights one per g x g block (vLLM's layouts, lora_*_fp8_op.py).
struct Fp8Operand {
  std::int64_t batch = 1;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool activation = false;
  std::int32_t group = 0;
  [[nodiscard]] std::int64_t group_rows() const noexcept { return group == 0 ? rows : activation ? 1 : group; }
  [[nodiscard]] std::int64_t group_cols() const noexcept { return group == 0 ? cols : group; }
  /// [batch, cdiv(rows, group_rows), cdiv(cols, group_cols)] scales.
  [[nodiscard]] std::int64_t scales() const noexcept {
    const std::int64_t gr = group_rows() > 0 ? group_rows() : 1;
    const std::int64_t gc = group_cols() > 0 ? group_cols() : 1;
    return batch * ((rows + gr - 1) / gr) * ((cols + gc - 1) / gc);
  }
};

/// The shrink's x and A, the expand's buf and B.
[[nodiscard]] Fp8Operand fp8_activation(const Problem& p) noexcept;
[[nodiscard]] Fp8Operand fp8_weights(const Problem& p) noexcept;
/// The dtype the reference reads the dequantized operands in: fp32 for the expand's
/// buf (as lora_linear's), W for the rest (bf16 for the shrink, which has no W).
[[nodiscard]] DType dequantized_dtype(const Problem& p, bool activation) noexcept;

}  // namespace lp
