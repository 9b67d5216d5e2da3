#include "ptx/parse.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "sass/instruction.hpp"

namespace lp::ptx {

namespace {

using sass::ListingError;

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

Statement parse_statement(std::string_view raw, int line, std::size_t offset, std::vector<std::string> labels,
                          std::string_view source) {
  Statement st;
  st.line = line;
  st.offset = offset;
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

/// Where the body that opens at `brace` closes (its matching brace; operand vectors
/// {...} nest inside it); text.size() when it does not.
std::size_t body_end(const std::string& text, std::size_t brace) {
  int depth = 0;
  std::size_t end = brace;
  for (; end < text.size(); ++end) {
    if (text[end] == '{') {
      ++depth;
    } else if (text[end] == '}' && --depth == 0) {
      break;
    }
  }
  return end;
}

/// The statements of the body between `brace` and `end` into `f`: split at ';'; a
/// brace that opens or closes a statement-free scope (inline asm) is dropped; labels
/// "name:" are taken off the front.
void read_body(const std::string& text, std::size_t brace, std::size_t end, const LineIndex& lines,
               std::string_view source, Function& f) {
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
        f.body.push_back(parse_statement(stmt, lines.line_at(cur_start), cur_start, std::move(labels), source));
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
    const std::size_t end = body_end(text, brace);
    if (end >= text.size()) {
      throw ListingError(std::string(source), lines.line_at(brace), "function '" + f.name + "' has no closing '}'");
    }
    read_body(text, brace, end, lines, source, f);
    out.push_back(std::move(f));
    pos = end + 1;
  }
  if (out.empty()) {
    throw ListingError(std::string(source), 0, "no .entry or .func with a body: not PTX");
  }
  return out;
}

}  // namespace

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

std::vector<Function> parse_functions(std::string_view text, std::string_view source) {
  return split_functions(clean(text), source);
}

std::string base_of(std::string_view opcode) { return std::string(opcode.substr(0, opcode.find('.'))); }

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

bool writes_first_operand(const Statement& st) {
  // Instructions whose first operand is read, not written (or that write no register).
  static const std::set<std::string> k_none = {"bar",   "barrier", "bra",      "brx",        "call",     "ret",
                                               "exit",  "trap",    "brkpt",    "membar",     "fence",    "st",
                                               "red",   "cp",      "prefetch", "prefetchu",  "stmatrix", "nanosleep",
                                               "setmaxnreg", "griddepcontrol", "pmevent", "wgmma", "discard",
                                               "applypriority", "multimem"};
  if (st.operands.empty() || k_none.count(base_of(st.opcode)) > 0) {
    return false;
  }
  const std::string& first = st.operands[0];
  return !first.empty() && (first[0] == '%' || first[0] == '{');
}

sass::KernelListing control_flow_listing(const Function& f) {
  sass::KernelListing k;
  k.name = f.name;
  for (std::size_t i = 0; i < f.body.size(); ++i) {
    const Statement& st = f.body[i];
    sass::Instruction insn;
    insn.address = i * sass::k_instruction_bytes;
    insn.line = st.line;
    insn.text = st.text;
    for (const std::string& label : st.labels) {
      k.labels[label] = insn.address;
    }
    if (st.guard) {
      insn.guard = sass::Guard{sass::Register{sass::RegisterFile::predicate, 0}, st.guard_negated};
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
    k.labels[label] = f.body.size() * sass::k_instruction_bytes;
  }
  return k;
}

}  // namespace lp::ptx
