#include "sass/cfg.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace lp::sass {
namespace {

enum class Flow { next, branch, call, ret, exit, indirect };

Flow flow_of(const Instruction& insn) {
  const std::string& b = insn.base;
  if (b == "BRA" || b == "JMP") {
    return Flow::branch;
  }
  if (b == "CALL") {
    return Flow::call;
  }
  if (b == "RET") {
    return Flow::ret;
  }
  if (b == "EXIT" || b == "KILL") {
    return Flow::exit;
  }
  if (b == "BRX" || b == "JMX") {
    return Flow::indirect;
  }
  return Flow::next;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<unsigned long long>(v));
  return buf;
}

/// Index of the instruction at `address`, if any.
std::optional<std::size_t> index_at(const KernelListing& k, std::uint64_t address) {
  auto it = std::lower_bound(k.instructions.begin(), k.instructions.end(), address,
                             [](const Instruction& i, std::uint64_t a) { return i.address < a; });
  if (it == k.instructions.end() || it->address != address) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(it - k.instructions.begin());
}

/// The target of a BRA/JMP/CALL: a `(label) operand, else an address immediate.
/// nullopt when the instruction names none inside this function (an external callee).
std::optional<std::size_t> resolve_target(const KernelListing& k, const Instruction& insn, std::string_view source,
                                          bool must_resolve) {
  for (const auto& op : insn.operands) {
    if (op.kind == OperandKind::target) {
      auto label = k.labels.find(op.label);
      if (label != k.labels.end()) {
        if (auto idx = index_at(k, label->second)) {
          return idx;
        }
      }
      if (must_resolve) {
        throw ListingError(std::string(source), insn.line,
                           "branch target '" + op.label + "' is not a label of function '" + k.name + "'");
      }
      return std::nullopt;
    }
  }
  for (auto it = insn.operands.rbegin(); it != insn.operands.rend(); ++it) {
    if (it->kind == OperandKind::immediate && it->value) {
      if (auto idx = index_at(k, *it->value)) {
        return idx;
      }
      if (must_resolve) {
        throw ListingError(std::string(source), insn.line,
                           "branch target " + hex(*it->value) + " is not an instruction of function '" + k.name +
                               "'");
      }
      return std::nullopt;
    }
  }
  if (must_resolve) {
    throw ListingError(std::string(source), insn.line, "branch without a target: '" + insn.text + "'");
  }
  return std::nullopt;
}

}  // namespace

std::size_t ControlFlowGraph::back_edge_count() const noexcept {
  std::size_t n = 0;
  for (const auto& b : m_blocks) {
    n += static_cast<std::size_t>(std::count(b.back_edge.begin(), b.back_edge.end(), true));
  }
  return n;
}

ControlFlowGraph::Leaders ControlFlowGraph::find_leaders(const KernelListing& kernel, std::string_view source) {
  const auto& insns = kernel.instructions;
  const std::size_t n = insns.size();
  Leaders l{std::vector<bool>(n, false), std::vector<std::optional<std::size_t>>(n), {}};
  l.leader[0] = true;
  // Blocks start where control can arrive: the entry, after a branch, at a target.
  // A label nothing branches to starts none, so a listing with labels (nvdisasm text
  // from the ELF) and one without (its JSON, raw code: batch.hpp) give the same graph.
  // Only an indirect branch may go to any label: then every label starts a block.
  const bool indirect = std::any_of(insns.begin(), insns.end(),
                                    [](const Instruction& insn) { return flow_of(insn) == Flow::indirect; });
  if (indirect) {
    for (const auto& [name, address] : kernel.labels) {
      if (auto idx = index_at(kernel, address)) {
        l.leader[*idx] = true;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Flow f = flow_of(insns[i]);
    if (f == Flow::next) {
      continue;
    }
    if (i + 1 < n) {
      l.leader[i + 1] = true;
    }
    if (f == Flow::branch || f == Flow::call) {
      l.target[i] = resolve_target(kernel, insns[i], source, f == Flow::branch);
      if (l.target[i]) {
        l.leader[*l.target[i]] = true;
        if (f == Flow::call && i + 1 < n) {
          l.return_sites.push_back(i + 1);
        }
      }
    }
  }
  return l;
}

void ControlFlowGraph::make_blocks(const std::vector<bool>& leader) {
  m_block_of.assign(leader.size(), 0);
  for (std::size_t i = 0; i < leader.size(); ++i) {
    if (leader[i]) {
      m_blocks.push_back(BasicBlock{i, i + 1, {}, {}, false});
    } else {
      m_blocks.back().last = i + 1;
    }
    m_block_of[i] = m_blocks.size() - 1;
  }
}

void ControlFlowGraph::link(const KernelListing& kernel, const Leaders& leaders) {
  const auto& insns = kernel.instructions;
  const std::size_t n = insns.size();
  for (BasicBlock& block : m_blocks) {
    const std::size_t last = block.last - 1;
    const Instruction& insn = insns[last];
    auto add = [&](std::size_t index) {
      const std::size_t to = m_block_of[index];
      if (std::find(block.successors.begin(), block.successors.end(), to) == block.successors.end()) {
        block.successors.push_back(to);
      }
    };
    const bool falls = block.last < n;
    const Flow f = insn.may_execute() ? flow_of(insn) : Flow::next;
    const bool also_falls = falls && !insn.always_executes();
    switch (f) {
      case Flow::next:
        if (falls) {
          add(block.last);
        }
        break;
      case Flow::branch:
        add(*leaders.target[last]);
        if (also_falls) {
          add(block.last);
        }
        break;
      case Flow::call:
        if (leaders.target[last]) {
          add(*leaders.target[last]);
          if (also_falls) {
            add(block.last);
          }
        } else if (falls) {
          add(block.last);
        }
        break;
      case Flow::ret:
        for (std::size_t site : leaders.return_sites) {
          add(site);
        }
        if (also_falls) {
          add(block.last);
        }
        break;
      case Flow::exit:
        if (also_falls) {
          add(block.last);
        }
        break;
      case Flow::indirect:
        for (const BasicBlock& other : m_blocks) {
          add(other.first);
        }
        break;
    }
    block.back_edge.assign(block.successors.size(), false);
  }
}

void ControlFlowGraph::mark_back_edges() {
  // Iterative depth-first search: an edge into a block still on the stack retreats.
  enum class Mark { white, grey, black };
  std::vector<Mark> mark(m_blocks.size(), Mark::white);
  std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}};
  mark[0] = Mark::grey;
  m_blocks[0].reachable = true;
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    if (next == m_blocks[b].successors.size()) {
      mark[b] = Mark::black;
      stack.pop_back();
      continue;
    }
    const std::size_t edge = next++;
    const std::size_t to = m_blocks[b].successors[edge];
    if (mark[to] == Mark::grey) {
      m_blocks[b].back_edge[edge] = true;
    } else if (mark[to] == Mark::white) {
      mark[to] = Mark::grey;
      m_blocks[to].reachable = true;
      stack.emplace_back(to, 0);
    }
  }
}

ControlFlowGraph ControlFlowGraph::build(const KernelListing& kernel, std::string_view source) {
  ControlFlowGraph g;
  if (kernel.instructions.empty()) {
    return g;
  }
  const Leaders leaders = find_leaders(kernel, source);
  g.make_blocks(leaders.leader);
  g.link(kernel, leaders);
  g.mark_back_edges();
  return g;
}

}  // namespace lp::sass
