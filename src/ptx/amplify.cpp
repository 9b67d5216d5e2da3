#include "ptx/amplify.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "ptx/parse.hpp"
#include "util/error.hpp"

namespace lp::ptx {

namespace {

/// The mask that clears a wgmma matrix descriptor's stride byte offset (bits 32-45).
constexpr std::string_view k_clear_stride_mask = "0xFFFFC000FFFFFFFF";

/// The parts of "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16".
struct WgmmaOpcode {
  std::string shape;  ///< "m64n128k16"
  int n = 0;
  std::string dtype;  ///< accumulator type
  std::string atype;
  std::string btype;
};

std::optional<WgmmaOpcode> read_opcode(const std::string& opcode) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= opcode.size()) {
    const std::size_t dot = opcode.find('.', start);
    parts.push_back(opcode.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) {
      break;
    }
    start = dot + 1;
  }
  // wgmma . mma_async . sync . aligned . shape . dtype . atype . btype
  if (parts.size() != 8 || parts[0] != "wgmma" || parts[1] != "mma_async" || parts[2] != "sync" ||
      parts[3] != "aligned") {
    return std::nullopt;
  }
  WgmmaOpcode w{parts[4], 0, parts[5], parts[6], parts[7]};
  const std::string& s = w.shape;
  if (s.rfind("m64n", 0) != 0 || s.size() < 8 || s.compare(s.size() - 3, 3, "k16") != 0) {
    return std::nullopt;
  }
  const std::string n = s.substr(4, s.size() - 7);
  const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), w.n);
  if (ec != std::errc() || end != n.data() + n.size() || w.n < 8 || w.n > 256 || w.n % 8 != 0) {
    return std::nullopt;
  }
  return w;
}

bool is_register_a_wgmma(const Statement& st) {
  return st.opcode.rfind("wgmma.mma_async", 0) == 0 && st.operands.size() >= 2 && !st.operands[1].empty() &&
         st.operands[1][0] == '{';
}

/// The count of the first wgmma.wait_group after body[from] (nullopt when none follows
/// or its count cannot be read; the hazard check reports the latter).
std::optional<int> wait_after(const Function& f, std::size_t from) {
  for (std::size_t i = from + 1; i < f.body.size(); ++i) {
    if (f.body[i].opcode.rfind("wgmma.wait_group", 0) == 0) {
      int count = 0;
      const std::string& text = f.body[i].operands.empty() ? std::string() : f.body[i].operands[0];
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
      if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
      }
      return count;
    }
  }
  return std::nullopt;
}

/// Why this register-A wgmma cannot be amplified, or nullopt.
std::optional<std::string> refusal(const Statement& st, const std::optional<WgmmaOpcode>& w) {
  if (!w) {
    return fmt::format("'{}' is not a dense m64nNk16 wgmma", st.opcode);
  }
  if (w->dtype != "f32") {
    return fmt::format("its accumulator is {}: the pairs' rounding is bounded for f32 only", w->dtype);
  }
  const bool sixteen_bit = (w->atype == "bf16" || w->atype == "f16") && w->atype == w->btype;
  if (!sixteen_bit) {
    return fmt::format("its A and B are {} and {}: only bf16 and f16 are amplified", w->atype, w->btype);
  }
  // d, {a}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b
  if (st.operands.size() != 7 || st.operands[0].empty() || st.operands[0][0] != '{') {
    return fmt::format("{} operands where a register-A 16-bit wgmma has 7", st.operands.size());
  }
  if (st.operands[6] != "0") {
    return fmt::format("its B is MN-major (imm-trans-b {}): no A tile is provably inside B's footprint",
                       st.operands[6]);
  }
  return std::nullopt;
}

/// The lines inserted before one register-A wgmma.
std::string pair_lines(const Statement& st, const WgmmaOpcode& w, int amplify, const std::string& indent) {
  const std::string& d = st.operands[0];
  const std::string& b = st.operands[2];
  const std::string& scale_d = st.operands[3];
  const std::string& scale_b = st.operands[5];
  const bool clear_stride = w.n < 64;
  std::string out = fmt::format(
      "{}// loraprobe amplify: {} dependent wgmma pair(s) on this wgmma's accumulator, scale-a -1 then +1 "
      "(src/ptx/amplify.hpp)\n",
      indent, amplify);
  std::string a = b;
  if (clear_stride) {
    out += indent + "{\n";
    out += indent + ".reg .b64 %lp_amp_a;\n";
    out += fmt::format("{}and.b64 %lp_amp_a, {}, {};\n", indent, b, k_clear_stride_mask);
    a = "%lp_amp_a";
  }
  for (int i = 0; i < amplify; ++i) {
    for (const char* scale_a : {"-1", "1"}) {
      // d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a (K-major), imm-trans-b
      out += fmt::format("{}{} {}, {}, {}, {}, {}, {}, 0, 0;\n", indent, st.opcode, d, a, b, scale_d, scale_a,
                         scale_b);
    }
  }
  if (clear_stride) {
    out += indent + "}\n";
  }
  return out;
}

}  // namespace

std::string Amplified::describe() const {
  if (amplify == 0) {
    return "not amplified (amplify 0)";
  }
  if (register_a_wgmma == 0) {
    return "no register-A wgmma: the PTX is unchanged";
  }
  if (sites.empty()) {
    return fmt::format("none of its {} register-A wgmma(s) could be amplified ({}): the PTX is unchanged",
                       register_a_wgmma, skipped.empty() ? "?" : skipped.front().reason);
  }
  const auto pending = static_cast<std::size_t>(
      std::count_if(sites.begin(), sites.end(), [](const AmplifySite& s) { return s.pending(); }));
  std::string text = fmt::format("{} pair(s) before each of {} register-A wgmma(s), {} of them left in flight by "
                                 "the next wgmma.wait_group",
                                 amplify, sites.size(), pending);
  if (!skipped.empty()) {
    text += fmt::format("; {} left alone ({})", skipped.size(), skipped.front().reason);
  }
  return text;
}

Amplified amplify_ptx(std::string_view ptx, int amplify, std::string_view source) {
  if (amplify < 0 || amplify > k_max_amplify) {
    throw UsageError(fmt::format("amplify {}: the pairs per wgmma must be within [0, {}]", amplify, k_max_amplify));
  }
  Amplified out;
  out.amplify = amplify;
  const std::vector<Function> functions = parse_functions(ptx, source);
  // (offset of the line the lines go before, the lines), in text order.
  std::vector<std::pair<std::size_t, std::string>> inserts;
  for (const Function& f : functions) {
    for (std::size_t i = 0; i < f.body.size(); ++i) {
      const Statement& st = f.body[i];
      if (!is_register_a_wgmma(st)) {
        continue;
      }
      ++out.register_a_wgmma;
      const std::optional<WgmmaOpcode> w = read_opcode(st.opcode);
      if (const std::optional<std::string> why = refusal(st, w)) {
        out.skipped.push_back({f.name, st.line, *why});
        continue;
      }
      if (st.guard) {
        out.skipped.push_back({f.name, st.line, "it is guarded: the pairs would run where it does not"});
        continue;
      }
      AmplifySite site;
      site.function = f.name;
      site.line = st.line;
      site.shape = w->shape;
      site.b_descriptor = st.operands[2];
      site.a_stride_cleared = w->n < 64;
      site.wait_after = wait_after(f, i);
      out.sites.push_back(site);
      if (amplify == 0) {
        continue;
      }
      // Before the wgmma's line when only blanks precede it there, else right before it.
      std::size_t line_start = st.offset;
      while (line_start > 0 && ptx[line_start - 1] != '\n') {
        --line_start;
      }
      const std::string_view before = ptx.substr(line_start, st.offset - line_start);
      const bool blank = std::all_of(before.begin(), before.end(), [](char c) { return c == ' ' || c == '\t'; });
      const std::string indent = blank ? std::string(before) : std::string("\t");
      std::string lines = pair_lines(st, *w, amplify, indent);
      if (!blank) {
        lines.insert(0, "\n");
        lines += indent;
      }
      inserts.emplace_back(blank ? line_start : st.offset, std::move(lines));
    }
  }
  if (amplify == 0 || inserts.empty()) {
    out.ptx = std::string(ptx);
    return out;
  }
  std::size_t extra = 0;
  for (const auto& [at, lines] : inserts) {
    extra += lines.size();
  }
  out.ptx.reserve(ptx.size() + extra);
  std::size_t copied = 0;
  for (const auto& [at, lines] : inserts) {
    out.ptx.append(ptx.substr(copied, at - copied));
    out.ptx += lines;
    copied = at;
  }
  out.ptx.append(ptx.substr(copied));
  return out;
}

}  // namespace lp::ptx
