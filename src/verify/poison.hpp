#pragma once
// Poison: the bit pattern written into every output element before each launch,
// so an element still holding it afterwards was never written.
//
// A poison must be a pattern the kernel cannot produce. Every value a LoRA kernel
// stores comes out of fp32 arithmetic (FMA, HGMMA, atomic add) and, for bf16/fp16
// outputs, a float -> bf16/fp16 conversion. We therefore use NEGATIVE SIGNALLING
// NaNs with odd payloads:
//
//   type  poison      bits                               why it cannot be produced
//   fp32  0xFFB1DEAD  1 11111111 0 1100011101111010101101  signalling (quiet bit 22 clear):
//                                                          IEEE arithmetic only returns quiet
//                                                          NaNs, and NVIDIA fp32 arithmetic
//                                                          returns the canonical 0x7FFFFFFF;
//                                                          low 16 bits 0xDEAD != 0, so no
//                                                          bf16->fp32 widening (low 16 bits 0)
//                                                          and no fp16->fp32 widening (low 13
//                                                          bits 0) yields it either.
//   bf16  0xFFA5      1 11111111 0 100101                 signalling (quiet bit 6 clear): cvt.rn
//                                                          and the CUDA headers return the
//                                                          canonical 0x7FFF for any NaN, and even
//                                                          a payload-keeping IEEE conversion
//                                                          returns a quiet NaN.
//   fp16  0xFDAD      1 11111 0 110101101                 signalling (quiet bit 9 clear): as bf16,
//                                                          canonical NaN is 0x7FFF.
//
// tests/verify/poison_test.cpp checks this exhaustively: every bf16/fp16 value
// widened and narrowed again, sums and products of them, and all 2^24 fp32 NaN
// patterns converted to bf16/fp16 never give the poison. The one way to produce a
// poison is to copy raw bits from an input tensor, which no LoRA kernel does (the
// HGMMA hazard garbles operands, not stores).
//
// Where poison cannot be used, unwritten elements are NOT measurable and the
// metric is reported as null, never as 0:
//   - ADD_INPUTS: the kernel reads y, so y must hold y_in before the launch;
//   - SPLIT_K > 1: the partial sums are atomically added into buf, which must start at 0.
// Rows of tokens without a LoRA (lora_of == -1) are compared bit for bit against
// what they held before the launch (poison, y_in or zero) and any change is counted
// as a write to an untouched row.

#include <cstdint>

#include "model/dtype.hpp"

namespace lp {

inline constexpr std::uint32_t k_poison_f32 = 0xFFB1DEADu;
inline constexpr std::uint16_t k_poison_bf16 = 0xFFA5u;
inline constexpr std::uint16_t k_poison_f16 = 0xFDADu;
/// e4m3 has one NaN per sign; no output is e4m3, so this only keeps the function total.
inline constexpr std::uint8_t k_poison_e4m3 = 0xFFu;

/// The poison pattern of `t` (in the low 16 or 8 bits for the narrow types).
LP_HD constexpr std::uint32_t poison_bits(DType t) {
  return t == DType::f32    ? k_poison_f32
         : t == DType::bf16 ? std::uint32_t{k_poison_bf16}
         : t == DType::f16  ? std::uint32_t{k_poison_f16}
                            : std::uint32_t{k_poison_e4m3};
}

}  // namespace lp
