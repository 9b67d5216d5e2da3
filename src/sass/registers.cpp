#include "sass/registers.hpp"
#include "util/text.hpp"

#include <array>
#include <charconv>
#include <stdexcept>
#include <string_view>

namespace lp::sass {
namespace {

constexpr int k_warpgroup_bits = 128 * 32;  // 128 threads x one 32-bit register
constexpr int k_warp_bits = 32 * 32;        // 32 threads x one 32-bit register

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> set) {
  for (auto v : set) {
    if (s == v) {
      return true;
    }
  }
  return false;
}

/// Element bits of a type modifier, 0 when `m` is not a type.
int type_bits(std::string_view m) {
  if (is_one_of(m, {"F64", "S64", "U64"})) {
    return 64;
  }
  if (is_one_of(m, {"F32", "S32", "U32", "TF32"})) {
    return 32;
  }
  if (is_one_of(m, {"F16", "BF16"})) {
    return 16;
  }
  if (is_one_of(m, {"E4M3", "E5M2", "S8", "U8"})) {
    return 8;
  }
  if (is_one_of(m, {"E2M3", "E3M2", "E2M1", "S4", "U4"})) {
    return m == "E2M3" || m == "E3M2" ? 6 : 4;
  }
  if (m == "B1") {
    return 1;
  }
  return 0;
}

/// "64x128x16" -> {64, 128, 16}; {0,0,0} when it is not a shape.
std::array<int, 3> parse_mnk(std::string_view s) {
  std::array<int, 3> out{0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    std::size_t x = s.find('x');
    out[static_cast<std::size_t>(i)] = parse_number<int>(s.substr(0, x)).value_or(0);
    if (out[static_cast<std::size_t>(i)] == 0 || (i < 2 && x == std::string_view::npos)) {
      return {0, 0, 0};
    }
    s = x == std::string_view::npos ? std::string_view{} : s.substr(x + 1);
  }
  return out;
}

/// Warp-level MMA shapes as nvdisasm spells them ("16816", "1688", "884", "16832").
std::array<int, 3> parse_warp_mma_shape(std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, std::array<int, 3>>, 9> k_shapes{{
      {"16816", {16, 8, 16}},
      {"1688", {16, 8, 8}},
      {"16832", {16, 8, 32}},
      {"16864", {16, 8, 64}},
      {"1684", {16, 8, 4}},
      {"884", {8, 8, 4}},
      {"8816", {8, 8, 16}},
      {"8832", {8, 8, 32}},
      {"168256", {16, 8, 256}},
  }};
  for (const auto& [name, shape] : k_shapes) {
    if (s == name) {
      return shape;
    }
  }
  return {0, 0, 0};
}

/// Registers moved by a memory access: .64 -> 2, .128 -> 4, else 1.
int access_width(const Instruction& insn) {
  if (insn.has_modifier("128")) {
    return 4;
  }
  if (insn.has_modifier("64")) {
    return 2;
  }
  return 1;
}

/// Registers of an LDSM/STSM: one per 8x8 matrix (.2/.4, or .x2/.x4).
int matrix_count(const Instruction& insn) {
  if (insn.modifiers.empty()) {
    return 1;
  }
  std::string_view last = insn.modifiers.back();
  if (last == "4" || last == "x4" || last == "X4") {
    return 4;
  }
  if (last == "2" || last == "x2" || last == "X2") {
    return 2;
  }
  return 1;
}

bool has_64bit_type(const Instruction& insn) {
  for (const auto& m : insn.modifiers) {
    if (type_bits(m) == 64) {
      return true;
    }
  }
  return false;
}

bool writes_only_predicates(std::string_view base) {
  return is_one_of(base, {"ISETP", "FSETP", "DSETP", "HSETP2", "PSETP", "PLOP3", "FCHK", "R2P", "VOTEU"});
}

bool is_store(std::string_view base) {
  return is_one_of(base, {"ST", "STG", "STS", "STL", "STSM", "RED", "REDG", "REDS", "STAS"});
}

bool is_warp_mma(std::string_view base) { return is_one_of(base, {"HMMA", "IMMA", "DMMA", "BMMA"}); }

/// Index of the destination operand: first after leading predicate operands.
std::optional<std::size_t> destination_index(const Instruction& insn) {
  if (writes_only_predicates(insn.base) || is_store(insn.base)) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < insn.operands.size(); ++i) {
    const Operand& op = insn.operands[i];
    if (op.kind == OperandKind::reg && op.reg &&
        (op.reg->file == RegisterFile::predicate || op.reg->file == RegisterFile::uniform_predicate)) {
      continue;
    }
    return op.kind == OperandKind::reg && op.reg && op.reg->file == RegisterFile::gpr ? std::optional(i)
                                                                                      : std::nullopt;
  }
  return std::nullopt;
}

/// Width of the destination of a non-wgmma instruction.
int write_width(const Instruction& insn) {
  const std::string_view base = insn.base;
  if (base == "LDSM") {
    return matrix_count(insn);
  }
  if (is_warp_mma(base)) {
    std::array<int, 3> shape{0, 0, 0};
    int acc_bits = 0;
    for (const auto& m : insn.modifiers) {
      if (shape[0] == 0) {
        shape = parse_warp_mma_shape(m);
      } else if (acc_bits == 0) {
        acc_bits = type_bits(m);
      }
    }
    if (shape[0] == 0 || acc_bits == 0) {
      throw std::invalid_argument("cannot read the shape and accumulator type of '" + insn.text + "'");
    }
    return std::max(1, shape[0] * shape[1] * acc_bits / k_warp_bits);
  }
  if (base == "CS2R") {
    return insn.has_modifier("32") ? 1 : 2;
  }
  if (base == "IMAD" && insn.has_modifier("WIDE")) {
    return 2;
  }
  if (is_one_of(base, {"DADD", "DMUL", "DFMA", "DMNMX"})) {
    return 2;
  }
  if (base == "F2F") {
    // F2F.<destination type>.<source type>
    for (const auto& m : insn.modifiers) {
      if (int bits = type_bits(m); bits != 0) {
        return bits == 64 ? 2 : 1;
      }
    }
  }
  if (is_one_of(base, {"I2F", "F2I", "I2I", "FRND"}) && has_64bit_type(insn)) {
    return 2;  // which of the types is the destination's is not spelled out: assume the wide one
  }
  return access_width(insn);
}

void add_range(std::vector<GprRange>& out, int first, int count) {
  if (first >= 0 && count > 0) {
    out.push_back({first, count});
  }
}

}  // namespace

bool is_wgmma(const Instruction& insn) noexcept {
  return insn.base == "HGMMA" || insn.base == "QGMMA" || insn.base == "IGMMA" || insn.base == "BGMMA";
}

WgmmaShape decode_wgmma(const Instruction& insn) {
  WgmmaShape w;
  std::array<int, 3> mnk{0, 0, 0};
  std::vector<int> types;
  for (const auto& m : insn.modifiers) {
    if (mnk[0] == 0) {
      mnk = parse_mnk(m);
      continue;
    }
    if (m == "SP") {
      w.sparse = true;
    } else if (int bits = type_bits(m); bits != 0) {
      types.push_back(bits);
    }
  }
  if (mnk[0] == 0) {
    throw std::invalid_argument("no MxNxK shape in '" + insn.text + "'");
  }
  if (types.empty()) {
    throw std::invalid_argument("no accumulator type in '" + insn.text + "'");
  }
  w.m = mnk[0];
  w.n = mnk[1];
  w.k = mnk[2];
  w.acc_bits = types[0];
  // A dense wgmma row of A spans 256 bits of K (k16 for 16-bit types, k8 for
  // tf32, k32 for 8-bit); a sparse one 512 (stored half). nvdisasm leaves out the
  // default F16 input type ("HGMMA.64x16x16.F32" multiplies F16), so the shape
  // is what says the element width; a named A type must agree with it.
  const int k_bits = w.sparse ? 512 : 256;
  if (w.k <= 0 || k_bits % w.k != 0) {
    throw std::invalid_argument("K of '" + insn.text + "' does not divide a 256-bit row");
  }
  w.a_bits = k_bits / w.k;
  if (types.size() > 1 && types[1] != w.a_bits) {
    throw std::invalid_argument("A type of '" + insn.text + "' (" + std::to_string(types[1]) +
                                " bits) disagrees with K=" + std::to_string(w.k));
  }
  const int acc_regs = w.m * w.n * w.acc_bits / k_warpgroup_bits;
  const int a_elems_k = w.sparse ? w.k / 2 : w.k;
  const int a_regs = w.m * a_elems_k * w.a_bits / k_warpgroup_bits;
  if (acc_regs < 1 || a_regs < 1) {
    throw std::invalid_argument("register footprint of '" + insn.text + "' is not a whole register");
  }
  // Operands: D, A (register or gdesc covering A and B), [B gdesc,] C, [scale predicate], [gsb0].
  if (insn.operands.size() < 3 || !insn.operands[0].gpr()) {
    throw std::invalid_argument("expected D, A, [B,] C operands in '" + insn.text + "'");
  }
  w.accumulator = {*insn.operands[0].gpr(), acc_regs};
  std::size_t c_index = 2;
  if (auto a = insn.operands[1].gpr()) {
    w.a_registers = GprRange{*a, a_regs};
    c_index = 3;
  } else if (insn.operands[1].kind != OperandKind::descriptor) {
    throw std::invalid_argument("A operand of '" + insn.text + "' is neither a register nor gdesc[...]");
  }
  if (c_index >= insn.operands.size() || insn.operands[c_index].kind != OperandKind::reg) {
    throw std::invalid_argument("no C operand in '" + insn.text + "'");
  }
  w.accumulate = insn.operands[c_index].gpr().has_value();
  for (const auto& op : insn.operands) {
    if (op.kind == OperandKind::flag && op.text == "gsb0") {
      w.commits = true;
    }
  }
  return w;
}

std::optional<int> warpgroup_depbar_count(const Instruction& insn) {
  if (insn.opcode != "WARPGROUP.DEPBAR.LE") {
    return std::nullopt;
  }
  for (const auto& op : insn.operands) {
    if (op.kind == OperandKind::immediate && op.value) {
      return static_cast<int>(*op.value);
    }
  }
  throw std::invalid_argument("no group count in '" + insn.text + "'");
}

RegisterEffects register_effects(const Instruction& insn) {
  RegisterEffects fx;
  if (is_wgmma(insn)) {
    WgmmaShape w = decode_wgmma(insn);
    fx.writes.push_back(w.accumulator);
    if (w.accumulate) {
      fx.reads.push_back(w.accumulator);
    }
    if (w.a_registers) {
      fx.reads.push_back(*w.a_registers);
    }
    return fx;
  }
  std::optional<std::size_t> dest = destination_index(insn);
  const bool double_op = is_one_of(insn.base, {"DADD", "DMUL", "DFMA", "DMNMX", "DSETP"});
  if (dest) {
    if (auto reg = insn.operands[*dest].gpr()) {  // RZ as destination: the result is dropped
      add_range(fx.writes, *reg, write_width(insn));
    }
  }
  // Register sources. Widths matter only for spotting reads of in-flight
  // accumulators; a narrow guess there can only hide a read, never invent one.
  for (std::size_t i = 0; i < insn.operands.size(); ++i) {
    const Operand& op = insn.operands[i];
    for (const auto& inner : op.inner_gprs) {
      add_range(fx.reads, inner.first, inner.count);
    }
    if (dest && i == *dest) {
      continue;
    }
    auto reg = op.gpr();
    if (!reg) {
      continue;
    }
    int width = op.suffix_width;
    if (double_op) {
      width = 2;
    } else if (is_store(insn.base) && i + 1 == insn.operands.size()) {
      width = insn.base == "STSM" ? matrix_count(insn) : access_width(insn);
    } else if (insn.base == "IMAD" && insn.has_modifier("WIDE") && i == 3) {
      width = 2;  // the 64-bit addend
    } else if (is_warp_mma(insn.base) && i == 3 && dest) {
      width = write_width(insn);  // C has D's shape
    }
    add_range(fx.reads, *reg, width);
  }
  return fx;
}

}  // namespace lp::sass
