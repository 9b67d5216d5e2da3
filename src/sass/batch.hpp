#pragma once
// Disassembling many cubins with few nvdisasm runs. nvdisasm costs about half a
// second per run whatever the input's size (most of it is starting up), and a few
// milliseconds per kernel on top, so the code of many kernels is laid end to end
// and disassembled as raw instructions (`nvdisasm -b SM90a`), then cut back into
// one listing per cubin. Only where that is provably the same listing as from the
// ELF (cubin.hpp's function_code): one function, no relocations applying to its
// code, sm_90/sm_90a. The one difference, labels, is undone: every operand that
// nvdisasm computes from the instruction's address (BRA, BSSY, CALL.REL, RET.REL)
// is made relative to the function again, so a cubin's listing does not depend on
// which cubins share its run. Absolute targets (JMP, JMX, BRX, CALL.ABS), a run
// that fails and a listing that does not cut cleanly fall back to one nvdisasm run
// on the cubin's ELF, as disassemble() does.
//
//   std::vector<lp::sass::BatchInput> in = {{bytes_a, "a.cubin"}, {bytes_b, "b.cubin"}};
//   for (const lp::sass::BatchOutput& out : lp::sass::disassemble_batch(tool, in, 16)) {
//     if (out.disassembly) { ... out.disassembly->listing ... }
//   }

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sass/nvdisasm.hpp"

namespace lp::sass {

/// One cubin to disassemble.
struct BatchInput {
  std::string_view cubin;  ///< ELF bytes; must outlive the call
  std::string name;        ///< names it in errors
  /// analyze_cubins: this cubin's produced parameters (AnalysisOptions::produced),
  /// over the options' when set.
  std::optional<std::map<int, std::string>> produced;
};

/// How one cubin was disassembled.
struct BatchOutput {
  std::optional<Disassembly> disassembly;  ///< unset when it failed (then `error`)
  std::string error;
  /// "code": its function's instructions, with others' in one run; "cubin": its ELF, alone.
  std::string input;
  std::string why_cubin;  ///< when `input` is "cubin": why it was not batched
  double ms = 0.0;        ///< its share of the wall time of the run(s) that made it
};

/// Most kernels in one nvdisasm run (bounds the output one run holds in memory).
inline constexpr std::size_t k_max_batch_kernels = 128;

/// Disassembles every input, `jobs` nvdisasm runs at a time (0: one per hardware
/// thread); the outputs are in the inputs' order. Never throws for one input's
/// failure: that output carries the error.
std::vector<BatchOutput> disassemble_batch(const Nvdisasm& tool, const std::vector<BatchInput>& inputs,
                                           unsigned jobs,
                                           std::chrono::milliseconds timeout = std::chrono::seconds(300));

/// The instruction `insn` of a function that starts `base` bytes into a batch's
/// code and is `size` bytes long, made relative to the function: its address, and
/// the operand nvdisasm computed from it for BRA, BSSY, CALL.REL and RET.REL.
/// nullopt when it cannot be (an absolute target, a target outside the function):
/// that cubin is then disassembled from its ELF. Exposed for the tests.
std::optional<Instruction> rebase(const Instruction& insn, std::uint64_t base, std::uint64_t size);

}  // namespace lp::sass
