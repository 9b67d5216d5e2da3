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

/// What the analysis needs to know about one instruction, decoded once.
struct Decoded {
  std::optional<WgmmaShape> wgmma;
  std::optional<int> depbar;
  RegisterEffects effects;
};

Scoreboard issue_wgmma(Scoreboard s, std::size_t index, const WgmmaShape& w) {
  insert_sorted(s.open, InFlight{index, false});
  if (w.commits) {
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
  }
  return s;
}

Scoreboard wait_groups(Scoreboard s, int keep) {
  const auto keep_n = static_cast<std::size_t>(std::max(keep, 0));
  if (s.committed.size() > keep_n) {
    s.committed.erase(s.committed.begin(), s.committed.end() - static_cast<std::ptrdiff_t>(keep_n));
  }
  return s;
}

State transfer(const State& in, const Instruction& insn, const Decoded& d, std::size_t index) {
  if (!insn.may_execute() || (!d.wgmma && !d.depbar)) {
    return in;
  }
  State out;
  for (const auto& s : in) {
    if (!insn.always_executes()) {
      out.insert(s);  // the guard may be false
    }
    out.insert(d.wgmma ? issue_wgmma(s, index, *d.wgmma) : wait_groups(s, *d.depbar));
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

bool overlaps(const GprRange& a, const GprRange& b) {
  return a.first < b.first + b.count && b.first < a.first + a.count;
}

void intersect_into(std::set<int>& out, const GprRange& touched, const GprRange& held) {
  for (int r = std::max(touched.first, held.first);
       r < std::min(touched.first + touched.count, held.first + held.count); ++r) {
    out.insert(r);
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

void check_instruction(const State& state, std::size_t index, const Decoded& d,
                       const std::vector<Decoded>& decoded, ConflictSink& sink) {
  for (const auto& s : state) {
    auto visit = [&](const InFlight& f) {
      const WgmmaShape& held = *decoded[f.wgmma].wgmma;
      if (held.a_registers) {
        std::set<int> regs;
        for (const auto& w : d.effects.writes) {
          intersect_into(regs, w, *held.a_registers);
        }
        sink.add(index, f, HeldRole::a_operand, Access::write, regs);
      }
      // MMAs chained on the same accumulator are ordered by the hardware.
      if (d.wgmma && d.wgmma->accumulator == held.accumulator) {
        return;
      }
      std::set<int> read_regs;
      std::set<int> write_regs;
      for (const auto& r : d.effects.reads) {
        if (overlaps(r, held.accumulator)) {
          intersect_into(read_regs, r, held.accumulator);
        }
      }
      for (const auto& w : d.effects.writes) {
        if (overlaps(w, held.accumulator)) {
          intersect_into(write_regs, w, held.accumulator);
        }
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
  ScoreboardResult result;
  const auto& insns = kernel.instructions;
  std::vector<Decoded> decoded(insns.size());
  for (std::size_t i = 0; i < insns.size(); ++i) {
    try {
      if (is_wgmma(insns[i])) {
        decoded[i].wgmma = decode_wgmma(insns[i]);
        ++result.wgmma_count;
        result.wgmma_register_a += decoded[i].wgmma->a_registers ? 1 : 0;
      }
      decoded[i].depbar = warpgroup_depbar_count(insns[i]);
      decoded[i].effects = register_effects(insns[i]);
    } catch (const std::invalid_argument& e) {
      throw ListingError(std::string(source), insns[i].line, e.what());
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
      state = transfer(state, insns[i], decoded[i], i);
    }
    for (std::size_t e = 0; e < blocks[b].successors.size(); ++e) {
      const std::size_t to = blocks[b].successors[e];
      const State along = blocks[b].back_edge[e] ? cross_back_edge(state) : state;
      const std::size_t before = entry[to].size();
      entry[to].insert(along.begin(), along.end());
      if (entry[to].size() > k_max_states_per_block) {
        throw lp::Error("kernel '" + kernel.name + "': wgmma scoreboard analysis exceeded " +
                        std::to_string(k_max_states_per_block) + " states at the block starting at line " +
                        std::to_string(insns[blocks[to].first].line));
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
      if (insns[i].may_execute()) {
        check_instruction(state, i, decoded[i], decoded, sink);
      }
      state = transfer(state, insns[i], decoded[i], i);
      for (const auto& s : state) {
        result.max_groups_in_flight = std::max(result.max_groups_in_flight, s.depth());
      }
    }
  }
  result.conflicts = sink.take();
  return result;
}

}  // namespace lp::sass
