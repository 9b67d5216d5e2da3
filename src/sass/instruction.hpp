#pragma once
// The parsed form of one SASS instruction, as nvdisasm prints it:
//   /*1d30*/  @!P0 HGMMA.64x128x16.F32.BF16 R24, R92, gdesc[UR8], R24, gsb0 ;
// Both listing front-ends (nvdisasm text, nvdisasm JSON) produce these records
// through parse_instruction(), so the analysis sees one vocabulary.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/error.hpp"

namespace lp::sass {

/// Bytes of one SASS instruction (every architecture since Volta).
inline constexpr std::uint64_t k_instruction_bytes = 16;

/// Register files of the SASS operand syntax. Only `gpr` matters to the hazard
/// checks (HGMMA reads and writes per-thread registers); the rest are parsed so
/// that they are never mistaken for one.
enum class RegisterFile { gpr, uniform, predicate, uniform_predicate, barrier, special };

/// One architectural register. The zero/true registers (RZ, URZ, PT, UPT, SRZ)
/// keep `index == k_zero_index`.
struct Register {
  static constexpr int k_zero_index = -1;
  RegisterFile file = RegisterFile::gpr;
  int index = k_zero_index;
  /// True for RZ, URZ, PT, UPT, SRZ: reads give 0/true, writes go nowhere.
  [[nodiscard]] bool is_zero() const noexcept { return index == k_zero_index; }
  bool operator==(const Register&) const = default;
};

/// A run of `count` consecutive general-purpose registers starting at R`first`.
struct GprRange {
  int first = 0;
  int count = 1;
  /// True when R`reg` lies in the range.
  [[nodiscard]] bool contains(int reg) const noexcept { return reg >= first && reg < first + count; }
  bool operator==(const GprRange&) const = default;
};

/// What an operand is, by its syntax.
enum class OperandKind {
  reg,         ///< R88, UR6, P0, !PT, B0, SR_TID.X (possibly with -, |..|, ~ or .reuse)
  immediate,   ///< 0x1f, -0x1, 1.5, +INF
  constant,    ///< c[0x0][0x28], cx[UR4][R2]
  memory,      ///< [R112+UR6+0x4000], desc[UR12][R2.64]
  descriptor,  ///< gdesc[UR8], gdesc[UR8].tnspB (wgmma shared-memory matrix descriptors)
  target,      ///< `(.L_x_1): a branch or call target given by label
  flag,        ///< gsb0: the wgmma group scoreboard
  other,       ///< anything else (SB0, {4,3}, "R20 0x0", ...), kept verbatim
};

/// One operand, with the registers it names.
struct Operand {
  OperandKind kind = OperandKind::other;
  std::string text;                 ///< as printed, trimmed
  std::optional<Register> reg;      ///< kind == reg
  bool negated = false;             ///< `!P0` (predicate complement)
  int suffix_width = 1;             ///< 2 for a register written `R2.64` (a 64-bit pair)
  /// GPRs inside brackets (memory/constant/descriptor), or inside an operand that
  /// pairs a register with an offset ("RET.REL.NODEC R20 0x0"): all read.
  std::vector<GprRange> inner_gprs;
  std::optional<std::uint64_t> value; ///< kind == immediate and an integer
  std::string label;                ///< kind == target
  /// The GPR this operand names directly (kind == reg, file == gpr, not RZ).
  [[nodiscard]] std::optional<int> gpr() const;
};

/// The guard `@P0`, `@!UP1`, ... in front of an instruction.
struct Guard {
  Register reg;
  bool negated = false;
};

/// One instruction of a kernel.
struct Instruction {
  std::uint64_t address = 0;
  std::optional<Guard> guard;
  std::string opcode;                  ///< with modifiers: "HGMMA.64x128x16.F32.BF16"
  std::string base;                    ///< before the first dot: "HGMMA"
  std::vector<std::string> modifiers;  ///< after it: {"64x128x16", "F32", "BF16"}
  std::vector<Operand> operands;
  std::string text;                    ///< canonical "@P0 LDS.64 R88, [R112+UR6+0x4000]"
  int line = 0;                        ///< 1-based line in the listing it came from; 0 if none
  /// False only for `@!PT` / `@!UPT` (ptxas pads with such never-executed instructions).
  [[nodiscard]] bool may_execute() const noexcept;
  /// True when unguarded or guarded by PT/UPT.
  [[nodiscard]] bool always_executes() const noexcept;
  /// True when `modifier` is one of the dot-separated modifiers.
  [[nodiscard]] bool has_modifier(std::string_view modifier) const noexcept;
};

/// A malformed listing or instruction. what() is "<source>:<line>: <message>" so
/// that the offending line can be found; the parts are kept for callers that
/// re-wrap it (an InputError for a user's file, a recorded Error for a variant).
class ListingError : public lp::Error {
 public:
  /// `source` names the listing (a path, or "<cubin> via nvdisasm"), `line` is
  /// 1-based (0 when the whole input is at fault), `message` says what is wrong.
  ListingError(std::string source, int line, std::string message)
      : lp::Error(source + ":" + std::to_string(line) + ": " + message),
        m_source(std::move(source)),
        m_line(line),
        m_message(std::move(message)) {}
  /// The parts of what(), for callers that re-wrap the error.
  [[nodiscard]] const std::string& source() const noexcept { return m_source; }
  [[nodiscard]] int line() const noexcept { return m_line; }
  [[nodiscard]] const std::string& message() const noexcept { return m_message; }

 private:
  std::string m_source;
  int m_line;
  std::string m_message;
};

/// Parses `text` ("@P0 OPCODE.MODS op, op, ..." without address or trailing ';')
/// into an Instruction at `address`. Throws std::invalid_argument with a message
/// naming the bad part; the listing parsers turn it into a ListingError with the line.
Instruction parse_instruction(std::uint64_t address, std::string_view text);

/// Parses one operand (already split at top-level commas). Throws std::invalid_argument.
Operand parse_operand(std::string_view text);

/// Splits an operand list at commas outside brackets/braces/parentheses; pieces trimmed.
std::vector<std::string> split_operands(std::string_view text);

/// "R88" for a GPR index (the report's spelling).
std::string gpr_name(int index);

}  // namespace lp::sass
