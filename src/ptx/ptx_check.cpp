#include "ptx/ptx_check.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "sass/cfg.hpp"
#include "sass/instruction.hpp"
#include "sass/scoreboard.hpp"

namespace lp::ptx {

namespace {

using sass::GprRange;
using sass::ListingError;

/// One PTX instruction of a function body.
struct Statement {
  int line = 0;
  std::vector<std::string> labels;  ///< labels placed right before it
  std::optional<std::string> guard;  ///< predicate register name
  bool guard_negated = false;
  std::string opcode;                ///< "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"
  std::vector<std::string> operands;
  std::string text;                  ///< whitespace collapsed
};

struct Function {
  std::string name;
  std::vector<Statement> body;
  std::vector<std::string> trailing_labels;  ///< labels after the last instruction
};

/// Text with comments blanked out and `.loc`/`.file` lines (which end without ';')
/// removed, keeping every newline so that offsets still map to lines.
std::string clean(std::string_view text) {
  std::string out(text);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out.compare(i, 2, "//") == 0) {
      while (i < out.size() && out[i] != '\n') {
        out[i++] = ' ';
      }
    } else if (out.compare(i, 2, "/*") == 0) {
      while (i < out.size() && out.compare(i, 2, "*/") != 0) {
        if (out[i] != '\n') {
          out[i] = ' ';
        }
        ++i;
      }
      for (std::size_t k = 0; k < 2 && i < out.size(); ++k) {
        out[i++] = ' ';
      }
      --i;
    }
  }
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t end = out.find('\n', start);
    if (end == std::string::npos) {
      end = out.size();
    }
    std::size_t first = start;
    while (first < end && std::isspace(static_cast<unsigned char>(out[first]))) {
      ++first;
    }
    if (out.compare(first, 4, ".loc") == 0 || out.compare(first, 5, ".file") == 0) {
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(first), out.begin() + static_cast<std::ptrdiff_t>(end), ' ');
    }
    start = end + 1;
  }
  return out;
}

/// 1-based line numbers of offsets into one text, by binary search over its newlines
/// (a count from the start for every statement would be quadratic in the file).
class LineIndex {
 public:
  explicit LineIndex(const std::string& text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') {
        m_newlines.push_back(i);
      }
    }
  }
  [[nodiscard]] int line_at(std::size_t offset) const {
    return 1 + static_cast<int>(std::lower_bound(m_newlines.begin(), m_newlines.end(), offset) - m_newlines.begin());
  }

 private:
  std::vector<std::size_t> m_newlines;
};

std::string collapse(std::string_view s) {
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
    } else {
      if (space) {
        out += ' ';
      }
      space = false;
      out += c;
    }
  }
  return out;
}

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

/// Splits at commas outside (), [], {}.
std::vector<std::string> split_operands(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
    if (c == ',' && depth == 0) {
      out.push_back(collapse(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!collapse(cur).empty()) {
    out.push_back(collapse(cur));
  }
  return out;
}

Statement parse_statement(std::string_view raw, int line, std::vector<std::string> labels, std::string_view source) {
  Statement st;
  st.line = line;
  st.labels = std::move(labels);
  std::string s = collapse(raw);
  st.text = s;
  std::size_t pos = 0;
  if (!s.empty() && s[0] == '@') {
    std::size_t end = s.find(' ');
    if (end == std::string::npos) {
      throw ListingError(std::string(source), line, "a guard without an instruction: '" + s + "'");
    }
    std::string g = s.substr(1, end - 1);
    if (!g.empty() && g[0] == '!') {
      st.guard_negated = true;
      g.erase(0, 1);
    }
    st.guard = g;
    pos = end + 1;
  }
  const std::size_t op_end = s.find(' ', pos);
  st.opcode = s.substr(pos, op_end == std::string::npos ? std::string::npos : op_end - pos);
  if (op_end != std::string::npos) {
    st.operands = split_operands(std::string_view(s).substr(op_end + 1));
  }
  return st;
}

/// The body of every `.entry` / `.func` that has one.
std::vector<Function> split_functions(const std::string& text, std::string_view source) {
  std::vector<Function> out;
  const LineIndex lines(text);
  std::size_t pos = 0;
  // The next ".entry" and ".func" at or after pos, each searched again only once passed.
  std::size_t entry = text.find(".entry");
  std::size_t func = text.find(".func");
  while (true) {
    if (entry != std::string::npos && entry < pos) {
      entry = text.find(".entry", pos);
    }
    if (func != std::string::npos && func < pos) {
      func = text.find(".func", pos);
    }
    const std::size_t at = std::min(entry, func);
    if (at == std::string::npos) {
      break;
    }
    std::size_t i = at + (at == entry ? 6 : 5);
    if (i < text.size() && is_ident_char(text[i])) {  // ".entry_x" or a longer directive
      pos = i;
      continue;
    }
    auto skip_space = [&] {
      while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) {
        ++i;
      }
    };
    skip_space();
    if (i < text.size() && text[i] == '(') {  // .func (.param .b32 ret) name(...)
      const std::size_t close = text.find(')', i);
      i = close == std::string::npos ? text.size() : close + 1;
      skip_space();
    }
    const std::size_t name_start = i;
    while (i < text.size() && is_ident_char(text[i])) {
      ++i;
    }
    Function f;
    f.name = text.substr(name_start, i - name_start);
    const std::size_t brace = text.find('{', i);
    const std::size_t semi = text.find(';', i);
    if (f.name.empty() || brace == std::string::npos || (semi != std::string::npos && semi < brace &&
                                                          text.find(')', i) < semi)) {
      pos = i;  // a prototype (".extern .func f(...);") or no name: no body here
      continue;
    }
    // The body: up to the matching brace; operand vectors {...} nest inside it.
    int depth = 0;
    std::size_t end = brace;
    for (; end < text.size(); ++end) {
      if (text[end] == '{') {
        ++depth;
      } else if (text[end] == '}' && --depth == 0) {
        break;
      }
    }
    if (end >= text.size()) {
      throw ListingError(std::string(source), lines.line_at(brace), "function '" + f.name + "' has no closing '}'");
    }
    // Statements: split at ';'; a brace that opens or closes a statement-free
    // scope (inline asm) is dropped; labels "name:" are taken off the front.
    std::string cur;
    std::size_t cur_start = std::string::npos;
    std::vector<std::string> labels;
    int operand_depth = 0;
    for (std::size_t k = brace + 1; k < end; ++k) {
      const char c = text[k];
      const bool blank = cur_start == std::string::npos;  // nothing but spaces so far
      if ((c == '{' || c == '}') && blank) {
        continue;  // a scope brace
      }
      if (c == '{') {
        ++operand_depth;
      } else if (c == '}') {
        --operand_depth;
      }
      const bool scope_colon = (k + 1 < end && text[k + 1] == ':') || text[k - 1] == ':';  // shared::cta
      constexpr std::size_t k_longest_label = 256;  // only a short prefix can be a label: keeps this linear
      if (c == ':' && operand_depth == 0 && !blank && !scope_colon && cur.size() <= k_longest_label) {
        const std::string label = collapse(cur);
        const bool is_label = std::all_of(label.begin(), label.end(), is_ident_char);
        if (is_label) {
          labels.push_back(label);
          cur.clear();
          cur_start = std::string::npos;
          continue;
        }
      }
      if (c == ';' && operand_depth == 0) {
        const std::string stmt = collapse(cur);
        if (!stmt.empty() && stmt[0] != '.') {  // directives (.reg, .shared, .pragma) hold no instruction
          f.body.push_back(parse_statement(stmt, lines.line_at(cur_start), std::move(labels), source));
          labels.clear();
        }
        cur.clear();
        cur_start = std::string::npos;
        continue;
      }
      if (cur_start == std::string::npos && !std::isspace(static_cast<unsigned char>(c))) {
        cur_start = k;
      }
      cur += c;
    }
    f.trailing_labels = std::move(labels);
    out.push_back(std::move(f));
    pos = end + 1;
  }
  if (out.empty()) {
    throw ListingError(std::string(source), 0, "no .entry or .func with a body: not PTX");
  }
  return out;
}

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

/// The register names in an operand, in order (%tid.x counts as %tid).
std::vector<std::string> registers_in(std::string_view operand) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < operand.size(); ++i) {
    if (operand[i] != '%') {
      continue;
    }
    std::size_t j = i + 1;
    while (j < operand.size() && (std::isalnum(static_cast<unsigned char>(operand[j])) || operand[j] == '_' ||
                                  operand[j] == '$')) {
      ++j;
    }
    if (j > i + 1) {
      out.emplace_back(operand.substr(i, j - i));
    }
    i = j - 1;
  }
  return out;
}

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

std::string base_of(const std::string& opcode) { return opcode.substr(0, opcode.find('.')); }

/// Instructions whose first operand is read, not written (or that write no register).
bool writes_no_register(const std::string& base) {
  static const std::set<std::string> k_none = {"bar",   "barrier", "bra",      "brx",        "call",     "ret",
                                               "exit",  "trap",    "brkpt",    "membar",     "fence",    "st",
                                               "red",   "cp",      "prefetch", "prefetchu",  "stmatrix", "nanosleep",
                                               "setmaxnreg", "griddepcontrol", "pmevent", "wgmma", "discard",
                                               "applypriority", "multimem"};
  return k_none.count(base) > 0;
}

bool is_register_operand(const std::string& op) { return !op.empty() && (op[0] == '%' || op[0] == '{'); }

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
      const bool dest = i == 0 && !writes_no_register(base) && is_register_operand(st.operands[0]);
      add(dest ? writes : reads, st.operands[i]);
    }
  }
  op.effects.reads = canonical(reads);
  op.effects.writes = canonical(writes);
  return op;
}

/// The function's control flow in the listing form the SASS graph builder reads:
/// `bra` is BRA to its label, `ret`/`exit`/`trap` are EXIT, guards are predicates.
sass::KernelListing skeleton(const Function& f, RegisterIds& ids) {
  sass::KernelListing k;
  k.name = f.name;
  for (std::size_t i = 0; i < f.body.size(); ++i) {
    const Statement& st = f.body[i];
    sass::Instruction insn;
    insn.address = i * 16;
    insn.line = st.line;
    insn.text = st.text;
    for (const std::string& label : st.labels) {
      k.labels[label] = insn.address;
    }
    if (st.guard) {
      insn.guard = sass::Guard{sass::Register{sass::RegisterFile::predicate, ids.id(*st.guard) & 0xFFFFF}, st.guard_negated};
    }
    const std::string base = base_of(st.opcode);
    if (base == "bra" && !st.operands.empty()) {
      insn.base = "BRA";
      sass::Operand target;
      target.kind = sass::OperandKind::target;
      target.label = st.operands.back();
      insn.operands.push_back(target);
    } else if (base == "brx") {
      insn.base = "BRX";
    } else if (base == "ret" || base == "exit" || base == "trap") {
      insn.base = "EXIT";
    } else {
      insn.base = "NOP";
    }
    insn.opcode = insn.base;
    k.instructions.push_back(std::move(insn));
  }
  for (const std::string& label : f.trailing_labels) {
    k.labels[label] = f.body.size() * 16;
  }
  return k;
}

}  // namespace

std::size_t PtxReport::finding_count() const noexcept {
  std::size_t n = 0;
  for (const auto& f : functions) {
    n += f.findings.size();
  }
  return n;
}

PtxReport analyze_ptx(std::string_view text, std::string_view source) {
  const std::string cleaned = clean(text);
  PtxReport report;
  for (const Function& f : split_functions(cleaned, source)) {
    RegisterIds ids;
    std::vector<sass::ScoreboardOp> ops;
    std::vector<int> lines;
    for (const Statement& st : f.body) {
      ops.push_back(op_of(st, ids, source));
      lines.push_back(st.line);
    }
    const sass::KernelListing k = skeleton(f, ids);
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

void to_json(nlohmann::json& j, const PtxFinding& f) {
  j = {{"check", f.check},
       {"function", f.function},
       {"line", f.line},
       {"instruction", f.instruction},
       {"access", f.access},
       {"registers", f.registers},
       {"wgmma", {{"line", f.wgmma_line}, {"instruction", f.wgmma_instruction}}},
       {"over_back_edge", f.over_back_edge}};
}

void to_json(nlohmann::json& j, const PtxFunctionReport& f) {
  j = {{"name", f.name},
       {"stats",
        {{"instructions", f.instructions},
         {"wgmma", f.wgmma},
         {"wgmma_register_a", f.wgmma_register_a},
         {"max_groups_in_flight", f.max_groups_in_flight}}},
       {"findings", f.findings}};
}

void to_json(nlohmann::json& j, const PtxReport& r) {
  j = {{"finding_count", r.finding_count()}, {"functions", r.functions}};
}

}  // namespace lp::ptx
