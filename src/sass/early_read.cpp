#include "sass/early_read.hpp"

#include <algorithm>
#include <bit>
#include <cctype>
#include <deque>
#include <optional>
#include <string_view>

#include "sass/registers.hpp"

namespace lp::sass {
namespace {

/// Bit i stands for the i-th produced parameter (by ordinal); at most 64 are told apart.
using ParamBits = std::uint64_t;

constexpr int k_gprs = 256;
constexpr int k_uniform = 64;

/// Per register (R0..R255, then UR0..UR63): the produced parameters its value derives from.
using RegisterParams = std::vector<ParamBits>;

/// The produced parameters of a cubin's function, found by their constant-bank offsets.
class Produced {
 public:
  Produced(const ParamLayout& layout, const std::map<int, std::string>& produced) : m_layout(layout), m_set(produced) {}
  [[nodiscard]] bool empty() const { return m_set.empty(); }

  /// The produced parameter holding c[0x0][at].
  [[nodiscard]] ParamBits at_bank_offset(std::uint32_t at) const {
    const std::optional<int> ordinal = m_layout.ordinal_at(at);
    return ordinal ? m_set.bit_of(*ordinal) : 0;
  }

  [[nodiscard]] const std::string& first_name(ParamBits bits) const { return m_set.first_name(bits); }

 private:
  const ParamLayout& m_layout;
  ProducedSet m_set;
};

/// The offset of every `c[0x0][0x...]` with an immediate offset in `text`.
std::vector<std::uint32_t> bank0_offsets(std::string_view text) {
  std::vector<std::uint32_t> out;
  constexpr std::string_view k_open = "c[0x0][0x";
  for (std::size_t at = text.find(k_open); at != std::string_view::npos; at = text.find(k_open, at + 1)) {
    if (at > 0 && std::isalnum(static_cast<unsigned char>(text[at - 1]))) {
      continue;  // cx[...]
    }
    std::size_t i = at + k_open.size();
    std::uint32_t value = 0;
    std::size_t digits = 0;
    while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])) && digits < 8) {
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
      value = value * 16 + static_cast<std::uint32_t>(c <= '9' ? c - '0' : c - 'a' + 10);
      ++i;
      ++digits;
    }
    if (digits > 0 && i < text.size() && text[i] == ']') {
      out.push_back(value);
    }
  }
  return out;
}

/// Uniform register numbers named in `text` (URZ excluded).
std::vector<int> uniform_registers_in(std::string_view text) {
  std::vector<int> out;
  for (std::size_t at = text.find("UR"); at != std::string_view::npos; at = text.find("UR", at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) {
      continue;
    }
    std::size_t i = at + 2;
    int value = 0;
    std::size_t digits = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && digits < 3) {
      value = value * 10 + (text[i] - '0');
      ++i;
      ++digits;
    }
    if (digits > 0 && value < k_uniform) {
      out.push_back(value);
    }
  }
  return out;
}

bool base_is_one_of(std::string_view base, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    if (base == n) {
      return true;
    }
  }
  return false;
}

/// A global read whose address the checks follow.
bool reads_global(const Instruction& insn) {
  return base_is_one_of(insn.base, {"LDG", "LD", "ATOMG", "ATOM", "LDGSTS", "UBLKCP", "UTMALDG"});
}

/// A load whose destination holds data read from memory (its provenance ends).
bool loads_data(const Instruction& insn) {
  return base_is_one_of(insn.base, {"LDG", "LD", "LDS", "LDL", "LDSM", "ATOMG", "ATOM", "ATOMS", "LDTRAM", "TLD", "TEX",
                               "SULD", "SUATOM", "LDC", "ULDC"});
}

/// The uniform registers `insn` writes (its first non-predicate operand when that is
/// a uniform register), with the width of `.64`/`.128` and UIMAD.WIDE.
std::vector<int> uniform_writes(const Instruction& insn) {
  for (const Operand& op : insn.operands) {
    if (op.kind == OperandKind::reg && op.reg &&
        (op.reg->file == RegisterFile::predicate || op.reg->file == RegisterFile::uniform_predicate)) {
      continue;
    }
    if (op.kind != OperandKind::reg || !op.reg || op.reg->file != RegisterFile::uniform || op.reg->is_zero()) {
      return {};
    }
    const int width = insn.has_modifier("128") ? 4 : insn.has_modifier("64") || insn.has_modifier("WIDE") ? 2 : 1;
    std::vector<int> out;
    for (int i = 0; i < width && op.reg->index + i < k_uniform; ++i) {
      out.push_back(op.reg->index + i);
    }
    return out;
  }
  return {};
}

/// The produced parameters of what `insn` reads: registers, uniform registers and
/// parameters in the constant bank, over all its operands but `skip` (its destination).
ParamBits source_bits(const Instruction& insn, const RegisterEffects& fx, const RegisterParams& s, const Produced& produced,
                      const Operand* skip) {
  ParamBits bits = 0;
  for (const GprRange& r : fx.reads) {
    for (int i = r.first; i < r.first + r.count && i < k_gprs; ++i) {
      bits |= s[static_cast<std::size_t>(i)];
    }
  }
  for (const Operand& op : insn.operands) {
    if (&op == skip) {
      continue;
    }
    for (std::uint32_t at : bank0_offsets(op.text)) {
      bits |= produced.at_bank_offset(at);
    }
    for (int u : uniform_registers_in(op.text)) {
      bits |= s[static_cast<std::size_t>(k_gprs + u)];
    }
  }
  return bits;
}

/// The produced parameters a global read's address derives from.
ParamBits address_bits(const Instruction& insn, const RegisterParams& s, const Produced& produced) {
  ParamBits bits = 0;
  for (const Operand& op : insn.operands) {
    if (op.kind != OperandKind::memory) {
      continue;
    }
    for (const GprRange& r : op.inner_gprs) {
      for (int i = r.first; i < r.first + r.count && i < k_gprs; ++i) {
        bits |= s[static_cast<std::size_t>(i)];
      }
    }
    for (int u : uniform_registers_in(op.text)) {
      bits |= s[static_cast<std::size_t>(k_gprs + u)];
    }
    for (std::uint32_t at : bank0_offsets(op.text)) {
      bits |= produced.at_bank_offset(at);
    }
  }
  return bits;
}

void transfer(const Instruction& insn, RegisterParams& s, const Produced& produced) {
  if (!insn.may_execute()) {
    return;
  }
  RegisterEffects fx;
  try {
    fx = register_effects(insn);
  } catch (const std::invalid_argument&) {
    return;  // an MMA the scoreboard would have refused already; it moves no address
  }
  const std::vector<int> uniform = uniform_writes(insn);
  if (fx.writes.empty() && uniform.empty()) {
    return;
  }
  ParamBits bits = 0;
  if (base_is_one_of(insn.base, {"LDC", "ULDC"})) {
    for (const Operand& op : insn.operands) {
      if (op.kind == OperandKind::constant) {
        for (std::uint32_t at : bank0_offsets(op.text)) {
          bits |= produced.at_bank_offset(at);
        }
      }
    }
  } else if (!loads_data(insn)) {
    bits = source_bits(insn, fx, s, produced, nullptr);
  }
  const bool keep = !insn.always_executes();
  auto write = [&](std::size_t index) { s[index] = keep ? (s[index] | bits) : bits; };
  for (const GprRange& r : fx.writes) {
    for (int i = r.first; i < r.first + r.count && i < k_gprs; ++i) {
      write(static_cast<std::size_t>(i));
    }
  }
  for (int u : uniform) {
    write(static_cast<std::size_t>(k_gprs + u));
  }
}

/// The provenance at each block's entry, to a fixed point (sets only grow).
std::vector<RegisterParams> entry_provenance(const KernelListing& kernel, const std::vector<BasicBlock>& blocks,
                                             const Produced& params) {
  std::vector<RegisterParams> in(blocks.size(), RegisterParams(k_gprs + k_uniform, 0));
  std::deque<std::size_t> todo{0};
  std::vector<bool> queued(blocks.size(), false);
  queued[0] = true;
  while (!todo.empty()) {
    const std::size_t b = todo.front();
    todo.pop_front();
    queued[b] = false;
    RegisterParams s = in[b];
    for (std::size_t i = blocks[b].first; i < blocks[b].last; ++i) {
      transfer(kernel.instructions[i], s, params);
    }
    for (std::size_t succ : blocks[b].successors) {
      bool grew = false;
      for (std::size_t r = 0; r < s.size(); ++r) {
        const ParamBits merged = in[succ][r] | s[r];
        grew = grew || merged != in[succ][r];
        in[succ][r] = merged;
      }
      if (grew && !queued[succ]) {
        queued[succ] = true;
        todo.push_back(succ);
      }
    }
  }
  return in;
}

}  // namespace

ProducedSet::ProducedSet(const std::map<int, std::string>& produced) {
  for (const auto& [ordinal, name] : produced) {
    if (m_ordinals.size() < 64) {
      m_ordinals.push_back(ordinal);
      m_names.push_back(name);
    }
  }
}

std::uint64_t ProducedSet::bit_of(int ordinal) const noexcept {
  for (std::size_t i = 0; i < m_ordinals.size(); ++i) {
    if (m_ordinals[i] == ordinal) {
      return std::uint64_t{1} << i;
    }
  }
  return 0;
}

const std::string& ProducedSet::first_name(std::uint64_t bits) const {
  return m_names.at(static_cast<std::size_t>(std::countr_zero(bits)));
}

bool early_reads_selected(const std::vector<std::string>& checks) {
  return checks.empty() || std::find(checks.begin(), checks.end(), k_early_read_id) != checks.end();
}

EarlyReadScan find_early_reads(const KernelListing& kernel, const ControlFlowGraph& cfg, const ParamLayout& layout,
                               const std::map<int, std::string>& produced) {
  EarlyReadScan scan;
  const Instruction* first_wait = nullptr;
  for (const Instruction& insn : kernel.instructions) {
    if (insn.base == "ACQBULK") {
      ++scan.waits;
      first_wait = first_wait != nullptr ? first_wait : &insn;
    } else if (insn.base == "PREEXIT") {
      ++scan.launch_dependents;
    }
  }
  const Produced params(layout, produced);
  const auto& blocks = cfg.blocks();
  if (first_wait == nullptr || params.empty() || blocks.empty()) {
    return scan;
  }

  const std::vector<RegisterParams> in = entry_provenance(kernel, blocks, params);

  // The blocks reached before an unguarded acquire, and the loads there.
  std::vector<bool> reached(blocks.size(), false);
  std::deque<std::size_t> walk{0};
  reached[0] = true;
  while (!walk.empty()) {
    const std::size_t b = walk.front();
    walk.pop_front();
    RegisterParams s = in[b];
    bool waited = false;
    for (std::size_t i = blocks[b].first; i < blocks[b].last && !waited; ++i) {
      const Instruction& insn = kernel.instructions[i];
      if (insn.base == "ACQBULK" && insn.always_executes()) {
        waited = true;
        break;
      }
      if (reads_global(insn) && insn.may_execute()) {
        if (const ParamBits bits = address_bits(insn, s, params); bits != 0) {
          scan.findings.push_back(EarlyRead{kernel.name, insn.address, insn.text, params.first_name(bits),
                                            first_wait->address, first_wait->text});
        }
      }
      transfer(insn, s, params);
    }
    if (waited) {
      continue;
    }
    for (std::size_t succ : blocks[b].successors) {
      if (!reached[succ]) {
        reached[succ] = true;
        walk.push_back(succ);
      }
    }
  }
  std::sort(scan.findings.begin(), scan.findings.end(),
            [](const EarlyRead& a, const EarlyRead& b) { return a.address < b.address; });
  return scan;
}

}  // namespace lp::sass
