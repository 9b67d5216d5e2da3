#include "ptx/early_read.hpp"

#include <cctype>
#include <cstdint>
#include <deque>
#include <set>

#include "sass/cfg.hpp"
#include "sass/early_read.hpp"

namespace lp::ptx {
namespace {

/// Bit i stands for the i-th produced parameter (by ordinal); at most 64 are told apart.
using ParamBits = std::uint64_t;

/// The produced parameters of a PTX function, found by their names (`<fn>_param_N`).
class Produced {
 public:
  Produced(const std::string& function, const ProducedParams& produced)
      : m_prefix(function + "_param_"), m_set(produced) {}

  /// The produced parameters an operand names directly (`[fn_param_0]`, `fn_param_0+8`).
  [[nodiscard]] ParamBits named_in(std::string_view operand) const {
    ParamBits bits = 0;
    for (std::size_t at = operand.find(m_prefix); at != std::string_view::npos;
         at = operand.find(m_prefix, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(operand[at - 1])) || operand[at - 1] == '_')) {
        continue;  // the tail of a longer name
      }
      std::size_t end = at + m_prefix.size();
      int ordinal = 0;
      std::size_t digits = 0;
      while (end < operand.size() && std::isdigit(static_cast<unsigned char>(operand[end])) && digits < 6) {
        ordinal = ordinal * 10 + (operand[end] - '0');
        ++end;
        ++digits;
      }
      if (digits == 0 || (end < operand.size() && std::isdigit(static_cast<unsigned char>(operand[end])))) {
        continue;
      }
      bits |= m_set.bit_of(ordinal);
    }
    return bits;
  }

  [[nodiscard]] const std::string& first_name(ParamBits bits) const { return m_set.first_name(bits); }
  [[nodiscard]] bool empty() const { return m_set.empty(); }

 private:
  std::string m_prefix;
  sass::ProducedSet m_set;
};

bool has_modifier(std::string_view opcode, std::string_view modifier) {
  std::size_t at = 0;
  while ((at = opcode.find('.', at)) != std::string_view::npos) {
    ++at;
    const std::size_t end = opcode.find('.', at);
    if (opcode.substr(at, end == std::string_view::npos ? end : end - at) == modifier) {
      return true;
    }
  }
  return false;
}

/// A read of memory whose value the statement writes to a register (its provenance
/// then ends): every `ld`/`ldu`/`atom`/`tex`/`suld`/`tld4`.
bool loads_a_value(const Statement& st) {
  static const std::set<std::string> k_loads = {"ld", "ldu", "atom", "tex", "tld4", "suld"};
  return k_loads.count(base_of(st.opcode)) > 0;
}

/// The operand holding the global address a statement reads, or nullptr when it
/// reads no global memory: `ld`/`ldu`/`atom` not of the param, shared, local or
/// const space (the global or the generic one), and `cp.async*`'s source.
const std::string* global_read_address(const Statement& st) {
  const std::string base = base_of(st.opcode);
  if (st.operands.size() < 2) {
    return nullptr;
  }
  if (base == "cp") {
    return st.opcode.rfind("cp.async", 0) == 0 ? &st.operands[1] : nullptr;
  }
  if (base != "ld" && base != "ldu" && base != "atom") {
    return nullptr;
  }
  for (const char* space : {"param", "shared", "local", "const"}) {
    if (has_modifier(st.opcode, space)) {
      return nullptr;
    }
  }
  return &st.operands[1];
}

/// Which registers hold a value derived from which produced parameters.
using Provenance = std::map<std::string, ParamBits>;

/// The produced parameters an operand's value derives from: those it names, and
/// those of the registers in it.
ParamBits bits_of(const Provenance& of, const Produced& params, const std::string& operand) {
  ParamBits bits = params.named_in(operand);
  for (const std::string& r : registers_in(operand)) {
    if (auto it = of.find(r); it != of.end()) {
      bits |= it->second;
    }
  }
  return bits;
}

/// Provenance: the union over every write of each register, to a fixed point.
Provenance provenance_of(const Function& f, const Produced& params) {
  Provenance of;
  for (bool changed = true; changed;) {
    changed = false;
    for (const Statement& st : f.body) {
      if (!writes_first_operand(st)) {
        continue;
      }
      ParamBits bits = 0;
      if (st.opcode.rfind("ld.param", 0) == 0) {
        bits = params.named_in(st.operands[1]);
      } else if (!loads_a_value(st)) {
        for (std::size_t i = 1; i < st.operands.size(); ++i) {
          bits |= bits_of(of, params, st.operands[i]);
        }
      }
      if (bits == 0) {
        continue;
      }
      for (const std::string& r : registers_in(st.operands[0])) {
        ParamBits& held = of[r];
        if ((held | bits) != held) {
          held |= bits;
          changed = true;
        }
      }
    }
  }
  return of;
}

/// Per statement: reachable from the entry along a path that has not passed an
/// unguarded wait.
std::vector<bool> before_the_wait(const Function& f, std::string_view source) {
  const sass::ControlFlowGraph cfg = sass::ControlFlowGraph::build(control_flow_listing(f), source);
  const auto& blocks = cfg.blocks();
  std::vector<bool> early(f.body.size(), false);
  std::vector<bool> queued(blocks.size(), false);
  std::deque<std::size_t> todo;
  if (!blocks.empty()) {
    todo.push_back(0);
    queued[0] = true;
  }
  while (!todo.empty()) {
    const sass::BasicBlock& b = blocks[todo.front()];
    todo.pop_front();
    bool waited = false;
    for (std::size_t i = b.first; i < b.last && !waited; ++i) {
      waited = f.body[i].opcode == "griddepcontrol.wait" && !f.body[i].guard;
      early[i] = !waited;
    }
    if (waited) {
      continue;
    }
    for (std::size_t s : b.successors) {
      if (!queued[s]) {
        queued[s] = true;
        todo.push_back(s);
      }
    }
  }
  return early;
}

}  // namespace

EarlyReadScan find_early_reads(const Function& f, const ProducedParams& produced, std::string_view source) {
  EarlyReadScan scan;
  const Statement* first_wait = nullptr;
  for (const Statement& st : f.body) {
    if (st.opcode == "griddepcontrol.wait") {
      ++scan.waits;
      first_wait = first_wait != nullptr ? first_wait : &st;
    } else if (st.opcode == "griddepcontrol.launch_dependents") {
      ++scan.launch_dependents;
    }
  }
  const Produced params(f.name, produced);
  if (first_wait == nullptr || params.empty()) {
    return scan;
  }
  const Provenance of = provenance_of(f, params);
  const std::vector<bool> early = before_the_wait(f, source);
  for (std::size_t i = 0; i < f.body.size(); ++i) {
    const Statement& st = f.body[i];
    const std::string* address = early[i] ? global_read_address(st) : nullptr;
    if (address == nullptr) {
      continue;
    }
    const ParamBits bits = bits_of(of, params, *address);
    if (bits != 0) {
      scan.findings.push_back(
          EarlyRead{f.name, st.line, st.text, params.first_name(bits), first_wait->line, first_wait->text});
    }
  }
  return scan;
}

}  // namespace lp::ptx
