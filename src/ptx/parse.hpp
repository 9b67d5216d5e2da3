#pragma once
// The PTX reader both PTX passes share: the wgmma hazard check (ptx_check.hpp) and
// the amplifier (amplify.hpp). It splits a module into its `.entry`/`.func` bodies
// and each body into statements (guard, opcode, operands), keeping where each
// statement starts in the text, so that a pass can insert lines before it and
// leave every byte of the original where it was.
//
// What it reads: labels; guards (`@%p`, `@!%p`); operands split at commas outside
// (), [] and {}; comments and `.loc`/`.file` lines are skipped. A brace that opens
// or closes a statement-free scope (inline asm) is dropped, so the statements of
// such a scope are the function's own.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sass/listing.hpp"

namespace lp::ptx {

/// One PTX instruction of a function body.
struct Statement {
  int line = 0;                      ///< 1-based line of its first character
  std::size_t offset = 0;            ///< offset of its first character in the text
  std::vector<std::string> labels;   ///< labels placed right before it
  std::optional<std::string> guard;  ///< predicate register name
  bool guard_negated = false;
  std::string opcode;                ///< "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
  std::vector<std::string> operands; ///< whitespace collapsed, "{%r1,%r2}" for a vector
  std::string text;                  ///< whitespace collapsed
};

/// One `.entry` or `.func` with a body.
struct Function {
  std::string name;
  std::vector<Statement> body;
  std::vector<std::string> trailing_labels;  ///< labels after the last instruction
};

/// Every function body of PTX `text`; `source` names it in errors. Throws
/// lp::sass::ListingError ("<source>:<line>: <message>") for text that has no
/// function body or an unbalanced brace.
std::vector<Function> parse_functions(std::string_view text, std::string_view source);

/// The function's control flow in the listing form the SASS graph builder
/// (sass::ControlFlowGraph) reads: statement i is instruction i at address 16*i;
/// `bra` is BRA to its label, `brx` BRX, `ret`/`exit`/`trap` EXIT, anything else a
/// NOP; a guard is a (never constant) predicate, so a guarded branch falls through.
sass::KernelListing control_flow_listing(const Function& f);

/// The opcode up to its first dot: "ld" of "ld.global.v4.b32".
std::string base_of(std::string_view opcode);

/// True when the statement writes the register(s) of its first operand: not for
/// stores, branches, barriers, fences, `cp.*`, `red`, `wgmma.*` (whose accumulator
/// the hazard check reads itself), `griddepcontrol`..., nor when that operand is not
/// a register or `{...}` vector.
bool writes_first_operand(const Statement& st);

/// The register names in an operand, in order ("%tid.x" gives "%tid").
std::vector<std::string> registers_in(std::string_view operand);

/// An operand list split at the commas outside (), [] and {}, each whitespace-collapsed.
std::vector<std::string> split_operands(std::string_view s);

}  // namespace lp::ptx
