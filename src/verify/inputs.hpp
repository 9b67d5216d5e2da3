#pragma once
// Seeded input tensors, generated on the device. Element i of tensor `id` under
// seed s is a pure function of (s, id, i) (Philox4x32-10), so the host twin
// generated_bits() reproduces any element bit for bit, and launch shape never matters.
//
// Magnitudes are realistic and bounded away from zero; signs are random:
//   activations (x, expand's fp32/bf16/fp16 input buf, the base output y_in):
//       |v| uniform in [0.25, 2]  -- "fp32 shrink outputs of order 1, x of order 1"
//   LoRA weights (A and B):   |v| uniform in [0.02, 0.1]
// The magnitude is drawn first and rounded to the tensor's dtype last; rounding is
// monotone and round(lo) > 0 for every range and dtype we allow (validate_range
// checks it), so an element can never be zero: zero is excluded by construction
// rather than resampled.

#include <cmath>
#include <cstdint>

#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "model/dtype.hpp"
#include "model/value_range.hpp"
#include "verify/philox.hpp"

namespace lp {

/// Tensor ids: the Philox counter's third word, one per tensor of a case.
namespace tensor_id {
inline constexpr std::uint32_t x = 0x01;
inline constexpr std::uint32_t buf = 0x02;
inline constexpr std::uint32_t y_in = 0x03;
/// lora_a(s) / lora_b(s): the A / B weights of slice s.
LP_HD constexpr std::uint32_t lora_a(std::int64_t slice) { return 0x10u + static_cast<std::uint32_t>(slice); }
LP_HD constexpr std::uint32_t lora_b(std::int64_t slice) { return 0x20u + static_cast<std::uint32_t>(slice); }
}  // namespace tensor_id

/// Element `index` of generated tensor `tensor` under `seed`, as bits of `t`.
/// The magnitude lo + (hi - lo) * u uses one explicit fma so host and device round
/// it identically (nvcc would contract a*b+c into an FMA on its own; g++ in ISO mode
/// would not).
LP_HD inline std::uint32_t generated_bits(DType t, ValueRange range, std::uint64_t seed, std::uint32_t tensor,
                                          std::uint64_t index) {
  const Philox4x32 r = philox4x32_10(
      Philox4x32{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), tensor, 0u}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  const float u = static_cast<float>(r.v[0] >> 8) * 5.9604644775390625e-08f;  // [0, 1) in steps of 2^-24
  const float magnitude = fmaf(range.hi - range.lo, u, range.lo);
  const float value = (r.v[1] & 1u) != 0u ? -magnitude : magnitude;
  return float_to_bits(t, value);
}

/// The FP8 families' scale of block `index` of tensor `tensor` under `seed`: a power
/// of two 2^0 .. 2^-3, drawn from the Philox stream beside the tensor's values (fourth
/// counter word 1), so that q * scale is exact in fp32, bf16 and fp16 and the dequantized
/// operands stay within the generator's magnitudes.
LP_HD inline float fp8_scale_value(std::uint64_t seed, std::uint32_t tensor, std::uint64_t index) {
  const Philox4x32 r = philox4x32_10(
      Philox4x32{{static_cast<std::uint32_t>(index), static_cast<std::uint32_t>(index >> 32), tensor, 1u}},
      static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32));
  return float_from_u32((127u - (r.v[0] & 3u)) << 23);
}

/// How an FP8 operand [batch, rows, cols] is cut into scale blocks: one fp32 scale per
/// group_rows x group_cols block of each batch entry, stored [batch, cdiv(rows,
/// group_rows), cdiv(cols, group_cols)] (per tensor: the groups are the whole matrix).
struct ScaleGrid {
  std::int64_t batch = 1;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t group_rows = 1;
  std::int64_t group_cols = 1;
  /// The number of scales.
  [[nodiscard]] std::int64_t scales() const noexcept {
    return batch * ((rows + group_rows - 1) / group_rows) * ((cols + group_cols - 1) / group_cols);
  }
};

/// Fills all of `scales` (fp32, at least grid.scales() of them: a caller may pad) with
/// fp8_scale_value(seed, tensor, i).
void fill_scales(const DeviceBuffer& scales, const ScaleGrid& grid, std::uint64_t seed, std::uint32_t tensor,
                 const Stream& stream);
/// dst = q * its block's scale, element by element, in dtype `t` (q is fp8e4m3 [batch,
/// rows, cols]; `scales` holds at least grid.scales()). Throws lp::Error when a buffer's
/// size disagrees with the grid.
void dequantize_on_device(const DeviceBuffer& q, const DeviceBuffer& scales, const ScaleGrid& grid,
                          const DeviceBuffer& dst, DType t, const Stream& stream);

/// Throws lp::Error unless 0 < round_t(lo) <= round_t(hi) < infinity, the
/// condition under which generated_bits can never return zero or infinity.
void validate_range(DType t, ValueRange range);

/// Fills all of `dst` (a whole number of `t` elements) with generated_bits(t, range,
/// seed, tensor, i), on the device, asynchronously on `stream`. Throws lp::Error for
/// a bad range or size, lp::CudaError when the launch fails.
void fill_generated(const DeviceBuffer& dst, DType t, ValueRange range, std::uint64_t seed, std::uint32_t tensor,
                    const Stream& stream);

/// Converts `count` elements of type `from` at `src` to type `to` at `dst` with
/// round-to-nearest-even (the reference's cast_W). Asynchronous on `stream`.
/// Throws lp::CudaError.
void convert_on_device(const void* src, DType from, void* dst, DType to, std::size_t count, const Stream& stream);

}  // namespace lp
