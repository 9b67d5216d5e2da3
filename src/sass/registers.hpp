#pragma once
// Which general-purpose registers an instruction reads and writes, and the
// register footprint of a warpgroup MMA (HGMMA/QGMMA/IGMMA/BGMMA).
//
// Write widths (registers written, starting at the destination operand):
//   wgmma D                      m*n*acc_bits / (128 threads * 32 bits)
//                                (m64n128 f32: 64; f16 accumulators: n/4)
//   HMMA/IMMA/DMMA D             m*n*acc_bits / (32 threads * 32 bits)  (16816.F32: 4)
//   LDSM ... .2 / .4 (.x2/.x4)   2 / 4 (one per 8x8 matrix), else 1
//   modifier .64 / .128          2 / 4   (LDS.64, LDG.E.128, LDC.64, ATOMG.E.EXCH.64, ...)
//   IMAD.WIDE(.U32), CS2R        2       (CS2R.32: 1)
//   D* float ops (DADD, DMUL, DFMA, DMNMX, DMMA handled above)  2
//   F2F.<dst>.<src>              2 when <dst> is F64
//   I2F/F2I/I2I/FRND with an F64/S64/U64 type   2 (conservative: any 64-bit type)
//   everything else with a GPR destination (MOV, F2FP, SEL, LDS.U16, ...)  1
// The destination is the first operand after leading predicate operands
// (SHFL.IDX PT, R3, ...; LOP3.LUT P0, R5, ...), except for opcodes that only
// write predicates (ISETP, FSETP, DSETP, HSETP2, PSETP, PLOP3, FCHK, R2P) and
// opcodes without a register destination (stores, RED, branches, barriers, ...),
// whose first operand is not a GPR anyway. Uniform-datapath instructions write
// only uniform registers, which HGMMA never reads for its A operand or accumulator.
// A table of what is known beats a guess: an unknown opcode gets the generic rule,
// which over-approximates (every .64/.128 widens) rather than under-approximates.

#include <optional>
#include <vector>

#include "sass/instruction.hpp"

namespace lp::sass {

/// GPRs read and written by one instruction. RZ never appears.
struct RegisterEffects {
  std::vector<GprRange> reads;
  std::vector<GprRange> writes;
};

/// Effects of `insn`, ignoring its guard (a guarded write may happen). Throws
/// std::invalid_argument for an MMA whose shape or types cannot be read.
RegisterEffects register_effects(const Instruction& insn);

/// The footprint of one warpgroup MMA.
struct WgmmaShape {
  int m = 0, n = 0, k = 0;
  int acc_bits = 0;        ///< accumulator element bits (F32/S32: 32, F16: 16)
  int a_bits = 0;          ///< A element bits, from K (16-bit: 16, TF32: 32, E4M3/E5M2/S8/U8: 8)
  bool sparse = false;     ///< .SP: A holds k/2 values per row
  GprRange accumulator;    ///< D (== C when C is not RZ)
  std::optional<GprRange> a_registers;  ///< A when it comes from registers, else nullopt (descriptor)
  bool accumulate = true;  ///< false when C is RZ (D = A*B)
  bool commits = false;    ///< carries `gsb0`: closes the wgmma group (wgmma.commit_group)
};

/// True for HGMMA, QGMMA, IGMMA, BGMMA (the sm_90 warpgroup MMAs).
bool is_wgmma(const Instruction& insn) noexcept;

/// Decodes a warpgroup MMA: shape from "MxNxK", the accumulator type from the
/// first type modifier, the A element width from K (a dense row of A is 256 bits:
/// k16 16-bit, k8 tf32, k32 8-bit; nvdisasm omits the default F16 input type, and
/// a named A type must agree). A registers = m*k*a_bits / 4096 (4 for every dense
/// m64 shape), accumulator = m*n*acc_bits / 4096. Throws std::invalid_argument
/// naming the instruction when a part is missing, unknown or inconsistent.
WgmmaShape decode_wgmma(const Instruction& insn);

/// The N of `WARPGROUP.DEPBAR.LE gsb0, N`, or nullopt when `insn` is not one.
/// Throws std::invalid_argument when it is one but N cannot be read.
std::optional<int> warpgroup_depbar_count(const Instruction& insn);

}  // namespace lp::sass
