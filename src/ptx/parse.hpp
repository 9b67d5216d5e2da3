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

/// An operand list split at the commas outside (), [] and {}, each whitespace-collapsed.
std::vector<std::string> split_operands(std::string_view s);

}  // namespace lp::ptx
