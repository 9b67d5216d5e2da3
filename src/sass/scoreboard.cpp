#include "sass/scoreboard.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "sass/registers.hpp"

namespace lp::sass {
namespace {

/// One HGMMA that may be in flight, and how the path got here from its issue.
struct InFlight {
  std::size_t wgmma = 0;
  bool over_back_edge = false;
  auto operator<=>(const InFlight&) const = default;
};

using Group = std::vector<InFlight>;  // sorted, unique

struct Scoreboard {
  std::vector<Group> committed;  // oldest first
  Group open;
  auto operator<=>(const Scoreboard&) const = default;
  [[nodiscard]] int depth() const { return static_cast<int>(committed.size()) + (open.empty() ? 0 : 1); }
};

using State = std::set<Scoreboard>;

void insert_sorted(Group& g, InFlight f) {
  auto it = std::lower_bound(g.begin(), g.end(), f);
  if (it == g.end() || *it != f) {
    g.insert(it, f);
  }
}

/// Closes the open group. An empty one still counts as a group for wait_group
/// (PTX ISA: commit_group with nothing outstanding makes an empty group).
Scoreboard commit_group(Scoreboard s) {
  s.committed.push_back(std::move(s.open));
  s.open.clear();
  if (s.committed.size() > k_max_tracked_groups) {
    Group merged = s.committed[0];
    for (const auto& f : s.committed[1]) {
      insert_sorted(merged, f);
    }
    s.committed.erase(s.committed.begin());
    s.committed.front() = std::move(merged);
  }
  return s;
}

Scoreboard issue_wgmma(Scoreboard s, std::size_t index, const ScoreboardOp::Mma& w) {
  insert_sorted(s.open, InFlight{index, false});
  return w.commits ? commit_group(std::move(s)) : s;
}

Scoreboard wait_groups(Scoreboard s, int keep) {
  const auto keep_n = static_cast<std::size_t>(std::max(keep, 0));
  if (s.committed.size() > keep_n) {
    s.committed.erase(s.committed.begin(), s.committed.end() - static_cast<std::ptrdiff_t>(keep_n));
  }
  return s;
}

State transfer(const State& in, const ScoreboardOp& d, std::size_t index) {
  if (!d.may_execute || (!d.mma && !d.wait && !d.commit)) {
    return in;
  }
  State out;
  for (const auto& s : in) {
    if (!d.always_executes) {
      out.insert(s);  // the guard may be false
    }
    out.insert(d.mma ? issue_wgmma(s, index, *d.mma) : d.commit ? commit_group(s) : wait_groups(s, *d.wait));
  }
  return out;
}

State cross_back_edge(const State& in) {
  State out;
  for (Scoreboard s : in) {
    auto mark = [](Group& g) {
      Group marked;
      for (auto f : g) {
        f.over_back_edge = true;
        insert_sorted(marked, f);
      }
      g = std::move(marked);
    };
    for (auto& g : s.committed) {
      mark(g);
    }
    mark(s.open);
    out.insert(std::move(s));
  }
  return out;
}

void intersect_into(std::set<int>& out, const GprRange& touched, const std::vector<GprRange>& held) {
  for (const GprRange& h : held) {
    for (int r = std::max(touched.first, h.first); r < std::min(touched.first + touched.count, h.first + h.count);
         ++r) {
      out.insert(r);
    }
  }
}

/// Accumulates conflicts per (instruction, wgmma, role, access).
class ConflictSink {
 public:
  void add(std::size_t insn, const InFlight& f, HeldRole role, Access access, const std::set<int>& regs) {
    if (regs.empty()) {
      return;
    }
    auto key = std::make_tuple(insn, f.wgmma, role, access);
    auto [it, fresh] = m_map.try_emplace(key, Entry{{}, true});
    it->second.registers.insert(regs.begin(), regs.end());
    it->second.all_over_back_edge = it->second.all_over_back_edge && f.over_back_edge;
  }

  std::vector<Conflict> take() {
    std::vector<Conflict> out;
    for (auto& [key, e] : m_map) {
      auto [insn, wgmma, role, access] = key;
      out.push_back(Conflict{insn, wgmma, role, access, {e.registers.begin(), e.registers.end()},
                             e.all_over_back_edge});
    }
    return out;
  }

 private:
  struct Entry {
    std::set<int> registers;
    bool all_over_back_edge = true;
  };
  std::map<std::tuple<std::size_t, std::size_t, HeldRole, Access>, Entry> m_map;
};

void check_instruction(const State& state, std::size_t index, const ScoreboardOp& d,
                       const std::vector<ScoreboardOp>& ops, ConflictSink& sink) {
  for (const auto& s : state) {
    auto visit = [&](const InFlight& f) {
      const ScoreboardOp::Mma& held = *ops[f.wgmma].mma;
      if (!held.a.empty()) {
        std::set<int> regs;
        for (const auto& w : d.effects.writes) {
          intersect_into(regs, w, held.a);
        }
        sink.add(index, f, HeldRole::a_operand, Access::write, regs);
      }
      // MMAs chained on the same accumulator are ordered by the hardware.
      if (d.mma && d.mma->accumulator == held.accumulator) {
        return;
      }
      std::set<int> read_regs;
      std::set<int> write_regs;
      for (const auto& r : d.effects.reads) {
        intersect_into(read_regs, r, held.accumulator);
      }
      for (const auto& w : d.effects.writes) {
        intersect_into(write_regs, w, held.accumulator);
      }
      sink.add(index, f, HeldRole::accumulator, Access::read, read_regs);
      sink.add(index, f, HeldRole::accumulator, Access::write, write_regs);
    };
    for (const auto& g : s.committed) {
      std::for_each(g.begin(), g.end(), visit);
    }
    std::for_each(s.open.begin(), s.open.end(), visit);
  }
}

}  // namespace

ScoreboardResult analyze_scoreboard(const KernelListing& kernel, const ControlFlowGraph& cfg,
                                    std::string_view source) {
  const auto& insns = kernel.instructions;
  std::vector<ScoreboardOp> ops(insns.size());
  std::vector<int> lines(insns.size());
  for (std::size_t i = 0; i < insns.size(); ++i) {
    ScoreboardOp& op = ops[i];
    op.may_execute = insns[i].may_execute();
    op.always_executes = insns[i].always_executes();
    lines[i] = insns[i].line;
    try {
      if (is_wgmma(insns[i])) {
        const WgmmaShape w = decode_wgmma(insns[i]);
        op.mma = ScoreboardOp::Mma{{}, {w.accumulator}, w.commits};
        if (w.a_registers) {
          op.mma->a = {*w.a_registers};
        }
      }
      op.wait = warpgroup_depbar_count(insns[i]);
      op.effects = register_effects(insns[i]);
    } catch (const std::invalid_argument& e) {
      throw ListingError(std::string(source), insns[i].line, e.what());
    }
  }
  return run_scoreboard(ops, cfg, kernel.name, lines);
}

ScoreboardResult run_scoreboard(const std::vector<ScoreboardOp>& ops, const ControlFlowGraph& cfg,
                                const std::string& name, const std::vector<int>& lines) {
  ScoreboardResult result;
  for (const ScoreboardOp& op : ops) {
    if (op.mma) {
      ++result.wgmma_count;
      result.wgmma_register_a += op.mma->a.empty() ? 0 : 1;
    }
  }
  const auto& blocks = cfg.blocks();
  if (blocks.empty()) {
    return result;
  }
  // Fixed point over block entry states (sets only grow, the domain is finite).
  std::vector<State> entry(blocks.size());
  entry[0].insert(Scoreboard{});
  std::deque<std::size_t> work{0};
  std::vector<bool> queued(blocks.size(), false);
  queued[0] = true;
  while (!work.empty()) {
    const std::size_t b = work.front();
    work.pop_front();
    queued[b] = false;
    State state = entry[b];
    for (std::size_t i = blocks[b].first; i < blocks[b].last; ++i) {
      state = transfer(state, ops[i], i);
    }
    for (std::size_t e = 0; e < blocks[b].successors.size(); ++e) {
      const std::size_t to = blocks[b].successors[e];
      const State along = blocks[b].back_edge[e] ? cross_back_edge(state) : state;
      const std::size_t before = entry[to].size();
      entry[to].insert(along.begin(), along.end());
      if (entry[to].size() > k_max_states_per_block) {
        throw lp::Error("kernel '" + name + "': wgmma scoreboard analysis exceeded " +
                        std::to_string(k_max_states_per_block) + " states at the block starting at line " +
                        std::to_string(lines.at(blocks[to].first)));
      }
      if (entry[to].size() != before && !queued[to]) {
        queued[to] = true;
        work.push_back(to);
      }
    }
  }
  // One more pass with the final entry states: conflicts and depth.
  ConflictSink sink;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    State state = entry[b];
    for (std::size_t i = blocks[b].first; i < blocks[b].last; ++i) {
      if (ops[i].may_execute) {
        check_instruction(state, i, ops[i], ops, sink);
      }
      state = transfer(state, ops[i], i);
      for (const auto& s : state) {
        result.max_groups_in_flight = std::max(result.max_groups_in_flight, s.depth());
      }
    }
  }
  result.conflicts = sink.take();
  return result;
}

}  // namespace lp::sass
