#include "sass/instruction.hpp"

#include <cctype>
#include <charconv>
#include <stdexcept>
#include "util/text.hpp"

namespace lp::sass {

namespace {

bool all_digits(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return true;
}

int register_number(std::string_view digits) {
  const std::optional<int> value = parse_number<int>(digits);
  if (!value) {
    throw std::invalid_argument("bad register number '" + std::string(digits) + "'");
  }
  return *value;
}

/// A register token: the register and the pair width its ".64" suffix implies.
struct RegisterToken {
  Register reg;
  int width = 1;
};

/// Parses "R88", "R2.64", "R5.reuse", "URZ", "!PT" is not accepted here (the caller
/// strips the '!'). Returns nullopt when the token is not a register at all, throws
/// when it starts like a GPR but is malformed (a silent miss would hide a write).
std::optional<RegisterToken> parse_register_token(std::string_view token) {
  if (token.starts_with("SR_") || token == "SRZ") {
    Register reg{RegisterFile::special, token == "SRZ" ? Register::k_zero_index : 0};
    return RegisterToken{reg, 1};
  }
  std::string_view base = token.substr(0, token.find('.'));
  std::string_view suffixes = base.size() < token.size() ? token.substr(base.size()) : std::string_view{};
  auto make = [&](RegisterFile file, std::string_view number, std::string_view zero_name,
                  std::string_view whole) -> std::optional<RegisterToken> {
    Register reg{file, Register::k_zero_index};
    if (whole != zero_name) {
      if (!all_digits(number)) {
        return std::nullopt;
      }
      reg.index = register_number(number);
    }
    int width = 1;
    std::string_view rest = suffixes;
    while (!rest.empty()) {
      rest.remove_prefix(1);  // the '.'
      std::string_view part = rest.substr(0, rest.find('.'));
      if (part == "64") {
        width = 2;
      }
      rest.remove_prefix(part.size());
    }
    return RegisterToken{reg, width};
  };
  std::optional<RegisterToken> result;
  if (base.starts_with("UR")) {
    result = make(RegisterFile::uniform, base.substr(2), "URZ", base);
  } else if (base.starts_with("UP")) {
    result = make(RegisterFile::uniform_predicate, base.substr(2), "UPT", base);
  } else if (base.starts_with('R')) {
    result = make(RegisterFile::gpr, base.substr(1), "RZ", base);
    if (!result && base.size() > 1 && std::isdigit(static_cast<unsigned char>(base[1])) != 0) {
      throw std::invalid_argument("malformed register '" + std::string(token) + "'");
    }
  } else if (base == "PR" || base == "UPR") {
    return RegisterToken{Register{RegisterFile::special, 0}, 1};
  } else if (base.starts_with('P')) {
    result = make(RegisterFile::predicate, base.substr(1), "PT", base);
  } else if (base.starts_with('B') && all_digits(base.substr(1))) {
    result = make(RegisterFile::barrier, base.substr(1), "", base);
  }
  return result;
}

/// Collects the GPRs named inside the brackets of a memory/constant/descriptor
/// operand: "[R112+UR6+0x4000]" -> R112, "desc[UR12][R2.64]" -> R2..R3.
std::vector<GprRange> gprs_in_brackets(std::string_view text) {
  std::vector<GprRange> out;
  std::size_t pos = 0;
  while ((pos = text.find('[', pos)) != std::string_view::npos) {
    std::size_t end = text.find(']', pos);
    if (end == std::string_view::npos) {
      throw std::invalid_argument("unbalanced '[' in '" + std::string(text) + "'");
    }
    std::string_view inside = text.substr(pos + 1, end - pos - 1);
    std::size_t start = 0;
    for (std::size_t i = 0; i <= inside.size(); ++i) {
      if (i == inside.size() || inside[i] == '+' || inside[i] == '-' || inside[i] == ' ' || inside[i] == '*') {
        std::string_view token = trim(inside.substr(start, i - start));
        start = i + 1;
        if (token.empty()) {
          continue;
        }
        if (auto reg = parse_register_token(token); reg && reg->reg.file == RegisterFile::gpr && !reg->reg.is_zero()) {
          out.push_back({reg->reg.index, reg->width});
        }
      }
    }
    pos = end + 1;
  }
  return out;
}

bool looks_numeric(std::string_view s) {
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    s.remove_prefix(1);
  }
  if (s.empty()) {
    return false;
  }
  return std::isdigit(static_cast<unsigned char>(s.front())) != 0 || s == "INF" || s == "QNAN" || s == "NAN" ||
         s == "SNAN";
}

std::optional<std::uint64_t> integer_value(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.starts_with("0x") || s.starts_with("0X")) {
    base = 16;
    s.remove_prefix(2);
  }
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value, base);
  if (s.empty() || ec != std::errc{} || ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return negative ? ~value + 1 : value;
}

}  // namespace

std::optional<int> Operand::gpr() const {
  if (kind == OperandKind::reg && reg && reg->file == RegisterFile::gpr && !reg->is_zero()) {
    return reg->index;
  }
  return std::nullopt;
}

bool Instruction::may_execute() const noexcept {
  return !(guard && guard->negated && guard->reg.is_zero());
}

bool Instruction::always_executes() const noexcept {
  return !guard || (!guard->negated && guard->reg.is_zero());
}

bool Instruction::has_modifier(std::string_view modifier) const noexcept {
  for (const auto& m : modifiers) {
    if (m == modifier) {
      return true;
    }
  }
  return false;
}

std::string gpr_name(int index) { return "R" + std::to_string(index); }

std::vector<std::string> split_operands(std::string_view text) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : ',';
    if (c == '[' || c == '{' || c == '(') {
      ++depth;
    } else if (c == ']' || c == '}' || c == ')') {
      --depth;
    } else if (c == ',' && depth <= 0) {
      std::string_view piece = trim(text.substr(start, i - start));
      if (!piece.empty() || i < text.size()) {
        out.emplace_back(piece);
      }
      start = i + 1;
    }
  }
  if (out.size() == 1 && out.front().empty()) {
    out.clear();
  }
  return out;
}

Operand parse_operand(std::string_view raw) {
  Operand op;
  std::string_view text = trim(raw);
  op.text = std::string(text);
  if (text.empty()) {
    throw std::invalid_argument("empty operand");
  }
  if (text.starts_with("`(")) {
    std::size_t close = text.find(')');
    if (close == std::string_view::npos) {
      throw std::invalid_argument("unterminated label in '" + op.text + "'");
    }
    op.kind = OperandKind::target;
    op.label = std::string(text.substr(2, close - 2));
    return op;
  }
  if (text == "gsb0") {
    op.kind = OperandKind::flag;
    return op;
  }
  if (text.front() == '{') {
    return op;  // OperandKind::other
  }
  if (std::size_t bracket = text.find('['); bracket != std::string_view::npos) {
    std::string_view prefix = text.substr(0, bracket);
    while (!prefix.empty() && (prefix.front() == '-' || prefix.front() == '!' || prefix.front() == '|')) {
      prefix.remove_prefix(1);
    }
    if (prefix.empty() || prefix == "desc") {
      op.kind = OperandKind::memory;
    } else if (prefix == "c" || prefix == "cx" || prefix == "ucx") {
      op.kind = OperandKind::constant;
    } else if (prefix == "gdesc") {
      op.kind = OperandKind::descriptor;
    }
    op.inner_gprs = gprs_in_brackets(text);
    return op;
  }
  if (text.find_first_of(" \t") != std::string_view::npos) {
    // "RET.REL.NODEC R20 0x0", "BRX R2 -0x1f0": a register and an offset in one operand.
    std::size_t start = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
      if (i == text.size() || text[i] == ' ' || text[i] == '\t') {
        std::string_view token = text.substr(start, i - start);
        start = i + 1;
        if (auto reg = parse_register_token(token); reg && reg->reg.file == RegisterFile::gpr && !reg->reg.is_zero()) {
          op.inner_gprs.push_back({reg->reg.index, reg->width});
        }
      }
    }
    return op;  // OperandKind::other
  }
  if (looks_numeric(text)) {
    op.kind = OperandKind::immediate;
    op.value = integer_value(text);
    return op;
  }
  // Register, possibly negated (!P0), complemented (~R2), signed (-R2) or absolute (|R2|).
  std::string_view body = text;
  while (!body.empty() && (body.front() == '-' || body.front() == '~' || body.front() == '!' ||
                           body.front() == '|')) {
    if (body.front() == '!') {
      op.negated = !op.negated;
    }
    body.remove_prefix(1);
  }
  while (!body.empty() && body.back() == '|') {
    body.remove_suffix(1);
  }
  if (auto reg = parse_register_token(body)) {
    op.kind = OperandKind::reg;
    op.reg = reg->reg;
    op.suffix_width = reg->width;
  }
  return op;
}

Instruction parse_instruction(std::uint64_t address, std::string_view raw) {
  Instruction insn;
  insn.address = address;
  std::string_view text = trim(raw);
  std::string guard_text;
  while (!text.empty() && (text.back() == ';' || std::isspace(static_cast<unsigned char>(text.back())) != 0)) {
    text.remove_suffix(1);
  }
  if (text.starts_with('@')) {
    std::size_t end = text.find_first_of(" \t");
    if (end == std::string_view::npos) {
      throw std::invalid_argument("guard without an instruction: '" + std::string(text) + "'");
    }
    Operand guard = parse_operand(text.substr(1, end - 1));
    if (guard.kind != OperandKind::reg ||
        (guard.reg->file != RegisterFile::predicate && guard.reg->file != RegisterFile::uniform_predicate)) {
      throw std::invalid_argument("guard '" + std::string(text.substr(0, end)) + "' is not a predicate");
    }
    insn.guard = Guard{*guard.reg, guard.negated};
    guard_text = std::string(text.substr(0, end));
    text = trim(text.substr(end));
  }
  std::size_t end = text.find_first_of(" \t");
  std::string_view opcode = text.substr(0, end);
  if (opcode.empty() || std::isupper(static_cast<unsigned char>(opcode.front())) == 0) {
    throw std::invalid_argument("expected an opcode, found '" + std::string(text) + "'");
  }
  insn.opcode = std::string(opcode);
  insn.base = std::string(opcode.substr(0, opcode.find('.')));
  for (std::size_t pos = insn.base.size(); pos < opcode.size();) {
    std::size_t next = opcode.find('.', pos + 1);
    insn.modifiers.emplace_back(opcode.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1));
    pos = next == std::string_view::npos ? opcode.size() : next;
  }
  std::string operands_text = end == std::string_view::npos ? std::string{} : std::string(trim(text.substr(end)));
  for (const auto& piece : split_operands(operands_text)) {
    insn.operands.push_back(parse_operand(piece));
  }
  insn.text = guard_text.empty() ? insn.opcode : guard_text + " " + insn.opcode;
  for (std::size_t i = 0; i < insn.operands.size(); ++i) {
    insn.text += (i == 0 ? " " : ", ") + insn.operands[i].text;
  }
  return insn;
}

}  // namespace lp::sass
