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

ControlFlowGraph ControlFlowGraph::build(const KernelListing& kernel, std::string_view source) {
  ControlFlowGraph g;
  const auto& insns = kernel.instructions;
  const std::size_t n = insns.size();
  if (n == 0) {
    return g;
  }
  // Targets of every control instruction (resolved once), and return sites.
  std::vector<std::optional<std::size_t>> target(n);
  std::vector<std::size_t> return_sites;
  std::vector<bool> leader(n, false);
  leader[0] = true;
  for (const auto& [name, address] : kernel.labels) {
    if (auto idx = index_at(kernel, address)) {
      leader[*idx] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Flow f = flow_of(insns[i]);
    if (f == Flow::next) {
      continue;
    }
    if (i + 1 < n) {
      leader[i + 1] = true;
    }
    if (f == Flow::branch || f == Flow::call) {
      target[i] = resolve_target(kernel, insns[i], source, f == Flow::branch);
      if (target[i]) {
        leader[*target[i]] = true;
        if (f == Flow::call && i + 1 < n) {
          return_sites.push_back(i + 1);
        }
      }
    }
  }
  g.m_block_of.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (leader[i]) {
      g.m_blocks.push_back(BasicBlock{i, i + 1, {}, {}, false});
    } else {
      g.m_blocks.back().last = i + 1;
    }
    g.m_block_of[i] = g.m_blocks.size() - 1;
  }
  for (std::size_t b = 0; b < g.m_blocks.size(); ++b) {
    BasicBlock& block = g.m_blocks[b];
    const std::size_t last = block.last - 1;
    const Instruction& insn = insns[last];
    auto add = [&](std::size_t index) {
      const std::size_t to = g.m_block_of[index];
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
        add(*target[last]);
        if (also_falls) {
          add(block.last);
        }
        break;
      case Flow::call:
        if (target[last]) {
          add(*target[last]);
          if (also_falls) {
            add(block.last);
          }
        } else if (falls) {
          add(block.last);
        }
        break;
      case Flow::ret:
        for (std::size_t site : return_sites) {
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
        for (std::size_t other = 0; other < g.m_blocks.size(); ++other) {
          add(g.m_blocks[other].first);
        }
        break;
    }
    block.back_edge.assign(block.successors.size(), false);
  }
  // Iterative depth-first search: an edge into a block still on the stack retreats.
  enum class Mark { white, grey, black };
  std::vector<Mark> mark(g.m_blocks.size(), Mark::white);
  std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}};
  mark[0] = Mark::grey;
  g.m_blocks[0].reachable = true;
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    if (next == g.m_blocks[b].successors.size()) {
      mark[b] = Mark::black;
      stack.pop_back();
      continue;
    }
    const std::size_t edge = next++;
    const std::size_t to = g.m_blocks[b].successors[edge];
    if (mark[to] == Mark::grey) {
      g.m_blocks[b].back_edge[edge] = true;
    } else if (mark[to] == Mark::white) {
      mark[to] = Mark::grey;
      g.m_blocks[to].reachable = true;
      stack.emplace_back(to, 0);
    }
  }
  return g;
}

}  // namespace lp::sass
