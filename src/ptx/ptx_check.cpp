#include "ptx/ptx_check.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ptx/parse.hpp"
#include "sass/cfg.hpp"
#include "sass/early_read.hpp"
#include "sass/instruction.hpp"
#include "sass/scoreboard.hpp"

namespace lp::ptx {

namespace {

using sass::GprRange;
using sass::ListingError;

/// Numbers PTX register names so that %r130, %r131, ... are consecutive (one
/// GprRange for a vector operand) and every other name gets an id of its own.
class RegisterIds {
 public:
  int id(const std::string& name) {
    std::size_t digits = name.size();
    while (digits > 1 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) {
      --digits;
    }
    const std::string prefix = name.substr(0, digits);
    int number = 0;
    if (digits < name.size() && name.size() - digits <= 6 && !(name[digits] == '0' && digits + 1 < name.size())) {
      number = std::stoi(name.substr(digits));
    } else {
      return fresh(name);
    }
    auto [it, added] = m_prefixes.try_emplace(prefix, static_cast<int>(m_prefixes.size()) + 1);
    const int value = it->second * k_stride + number;
    m_names.try_emplace(value, name);
    return value;
  }
  [[nodiscard]] const std::string& name(int id) const { return m_names.at(id); }

 private:
  static constexpr int k_stride = 1 << 20;
  int fresh(const std::string& name) {
    auto [it, added] = m_whole.try_emplace(name, -static_cast<int>(m_whole.size()) - 1);
    m_names.try_emplace(it->second, name);
    return it->second;
  }
  std::map<std::string, int> m_prefixes;
  std::map<std::string, int> m_whole;
  std::map<int, std::string> m_names;
};

std::vector<GprRange> canonical(std::vector<int> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<GprRange> out;
  for (int id : ids) {
    if (!out.empty() && out.back().first + out.back().count == id) {
      ++out.back().count;
    } else {
      out.push_back(GprRange{id, 1});
    }
  }
  return out;
}

sass::ScoreboardOp op_of(const Statement& st, RegisterIds& ids, std::string_view source) {
  sass::ScoreboardOp op;
  op.always_executes = !st.guard.has_value();
  std::vector<int> reads;
  std::vector<int> writes;
  auto add = [&](std::vector<int>& to, const std::string& operand) {
    for (const std::string& r : registers_in(operand)) {
      to.push_back(ids.id(r));
    }
  };
  if (st.guard) {
    reads.push_back(ids.id(*st.guard));
  }
  const std::string base = base_of(st.opcode);
  if (st.opcode.rfind("wgmma.mma_async", 0) == 0) {
    if (st.operands.size() < 4 || st.operands[0].empty() || st.operands[0][0] != '{') {
      throw ListingError(std::string(source), st.line, "cannot read the operands of '" + st.text + "'");
    }
    std::vector<int> d;
    std::vector<int> a;
    add(d, st.operands[0]);
    if (st.operands[1][0] == '{') {
      add(a, st.operands[1]);
    }
    for (std::size_t i = 1; i < st.operands.size(); ++i) {
      add(reads, st.operands[i]);
    }
    reads.insert(reads.end(), d.begin(), d.end());  // C = D unless scale-d is false
    writes = d;
    op.mma = sass::ScoreboardOp::Mma{canonical(a), canonical(d), false};
  } else if (st.opcode.rfind("wgmma.commit_group", 0) == 0) {
    op.commit = true;
  } else if (st.opcode.rfind("wgmma.wait_group", 0) == 0) {
    if (st.operands.size() != 1 || st.operands[0].empty() ||
        !std::all_of(st.operands[0].begin(), st.operands[0].end(), [](char c) { return std::isdigit(c); })) {
      throw ListingError(std::string(source), st.line, "wgmma.wait_group without a count: '" + st.text + "'");
    }
    if (st.operands[0].size() > 9) {  // std::stoi would throw past int; no real count is near
      throw ListingError(std::string(source), st.line, "wgmma.wait_group count " + st.operands[0] + " is too large");
    }
    op.wait = std::stoi(st.operands[0]);
  } else {
    for (std::size_t i = 0; i < st.operands.size(); ++i) {
      const bool dest = i == 0 && writes_first_operand(st);
      add(dest ? writes : reads, st.operands[i]);
    }
  }
  op.effects.reads = canonical(reads);
  op.effects.writes = canonical(writes);
  return op;
}

}  // namespace

std::size_t PtxReport::finding_count() const noexcept {
  std::size_t n = 0;
  for (const auto& f : functions) {
    n += f.findings.size();
  }
  return n;
}

std::size_t PtxReport::early_read_count() const noexcept {
  std::size_t n = 0;
  for (const auto& f : functions) {
    n += f.early_reads.size();
  }
  return n;
}

PtxReport analyze_ptx(std::string_view text, std::string_view source, const ProducedParams& produced) {
  PtxReport report;
  for (const Function& f : parse_functions(text, source)) {
    RegisterIds ids;
    std::vector<sass::ScoreboardOp> ops;
    std::vector<int> lines;
    for (const Statement& st : f.body) {
      ops.push_back(op_of(st, ids, source));
      lines.push_back(st.line);
    }
    const sass::KernelListing k = control_flow_listing(f);
    const sass::ControlFlowGraph cfg = sass::ControlFlowGraph::build(k, source);
    const sass::ScoreboardResult sb = sass::run_scoreboard(ops, cfg, f.name, lines);
    PtxFunctionReport fr;
    fr.name = f.name;
    fr.instructions = f.body.size();
    fr.wgmma = sb.wgmma_count;
    fr.wgmma_register_a = sb.wgmma_register_a;
    fr.max_groups_in_flight = sb.max_groups_in_flight;
    for (const sass::Conflict& c : sb.conflicts) {
      PtxFinding finding;
      finding.check = c.role == sass::HeldRole::a_operand ? "wgmma-a-reg-reuse" : "wgmma-acc-in-flight";
      finding.function = f.name;
      finding.line = f.body[c.instruction].line;
      finding.instruction = f.body[c.instruction].text;
      finding.access = c.access == sass::Access::write ? "write" : "read";
      for (int r : c.registers) {
        finding.registers.push_back(ids.name(r));
      }
      finding.wgmma_line = f.body[c.wgmma].line;
      finding.wgmma_instruction = f.body[c.wgmma].text;
      finding.over_back_edge = c.over_back_edge;
      fr.findings.push_back(std::move(finding));
    }
    EarlyReadScan early = find_early_reads(f, produced, source);
    fr.gdc_waits = early.waits;
    fr.early_reads = std::move(early.findings);
    report.functions.push_back(std::move(fr));
  }
  return report;
}

std::string attribution(std::size_t ptx_findings, std::size_t sass_findings) {
  if (sass_findings == 0) {
    return "none";
  }
  return ptx_findings > 0 ? "ptx" : "ptxas";
}

}  // namespace lp::ptx
