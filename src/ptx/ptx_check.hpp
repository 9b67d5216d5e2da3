#pragma once
// Who made the hazard: the same wgmma scoreboard analysis as the SASS check
// (sass/scoreboard.hpp), run on PTX registers. A finding is a PTX instruction
// that may execute while a wgmma.mma_async is pending (issued, its group not yet
// retired by wgmma.wait_group) and writes one of the PTX registers it reads as A,
// or touches its accumulator without being a wgmma chained on it. The PTX ISA
// leaves such code undefined, so a PTX finding means the fix belongs in the PTX
// producer (Triton) and no ptxas can be relied on; a SASS finding without a PTX
// finding means ptxas made the hazard.
//
// What the parser reads: every `.entry` and `.func` body; labels; guards
// (`@%p`, `@!%p`); `bra`, `ret`, `exit`, `trap` for control flow; the first
// operand of an instruction as its destination (a register or `{...}` vector;
// `setp`'s `%p|%q` both), except for instructions that write no register (bar,
// bra, call's parameters, st, red, fences...). Inline-asm scopes `{ ... }` are
// flattened: a register declared inside one is taken as the outer one of the same
// name, which can only add findings. No GPU and no nvdisasm needed.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>


#include "ptx/early_read.hpp"

namespace lp::ptx {

/// One offending (instruction, pending wgmma) pair.
struct PtxFinding {
  std::string check;                   ///< "wgmma-a-reg-reuse" or "wgmma-acc-in-flight", as in the SASS check
  std::string function;
  int line = 0;                        ///< 1-based line of the offending instruction
  std::string instruction;             ///< its text, as written (whitespace collapsed)
  std::string access;                  ///< "write" or "read"
  std::vector<std::string> registers;  ///< the PTX registers involved, e.g. "%r130"
  int wgmma_line = 0;                  ///< the pending wgmma.mma_async
  std::string wgmma_instruction;
  bool over_back_edge = false;         ///< only paths round a loop back-edge show it
};

/// Per function: size and what was found.
struct PtxFunctionReport {
  std::string name;
  std::size_t instructions = 0;
  std::size_t wgmma = 0;             ///< wgmma.mma_async instructions
  std::size_t wgmma_register_a = 0;  ///< of which read A from registers
  int max_groups_in_flight = 0;
  std::size_t gdc_waits = 0;           ///< griddepcontrol.wait statements
  std::vector<PtxFinding> findings;
  std::vector<EarlyRead> early_reads;  ///< gdc-early-read (early_read.hpp)
};

/// The analysis of one PTX module.
struct PtxReport {
  std::vector<PtxFunctionReport> functions;
  /// wgmma hazard findings (wgmma-a-reg-reuse, wgmma-acc-in-flight).
  [[nodiscard]] std::size_t finding_count() const noexcept;
  /// gdc-early-read findings.
  [[nodiscard]] std::size_t early_read_count() const noexcept;
};

/// Analyses PTX text; `source` names it in errors. `produced`: the parameters the
/// previous grid writes, for the gdc-early-read pass of every function (empty: that
/// pass finds nothing). Throws lp::sass::ListingError
/// ("<source>:<line>: <message>") for PTX it cannot read (no function body, an
/// unbalanced brace, a branch to a missing label, an undecodable wgmma).
PtxReport analyze_ptx(std::string_view text, std::string_view source, const ProducedParams& produced = {});

/// Who is at fault for a kernel's hazard, from its PTX and SASS finding counts:
/// "ptx" (the PTX breaks the rule: fix the PTX producer), "ptxas" (the PTX is
/// clean, the SASS is not: a newer ptxas can fix it), "none" (no SASS hazard).
std::string attribution(std::size_t ptx_findings, std::size_t sass_findings);

}  // namespace lp::ptx
