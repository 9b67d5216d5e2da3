#include "formats/table.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "plan/axes.hpp"

namespace lp::formats {

using nlohmann::json;

namespace {

std::string text(const json& axes, const char* key) {
  const auto it = axes.find(key);
  if (it == axes.end() || it->is_null()) {
    return "?";
  }
  return plan::format_value(*it);
}

}  // namespace

std::string row_label(const json& axes) {
  // Triton first: the same configuration under two Tritons is two rows, and the
  // question a row answers is "this stack, this config".
  std::string label = axes.contains("triton") ? "t" + text(axes, "triton") + " " : std::string();
  label += text(axes, "op");
  if (axes.contains("input_dtype")) {
    label += fmt::format(" {}>{}", text(axes, "input_dtype"), text(axes, "weight_dtype"));
  } else {
    label += " " + text(axes, "weight_dtype");
  }
  label += fmt::format(" r{} h{}", text(axes, "rank"), text(axes, "hidden"));
  if (axes.value("num_loras", 1) > 1) {
    label += fmt::format(" L{}", text(axes, "num_loras"));
  }
  label += fmt::format(" m{}n{}k{} w{}s{}", text(axes, "block_m"), text(axes, "block_n"), text(axes, "block_k"),
                       text(axes, "num_warps"), text(axes, "num_stages"));
  if (axes.contains("split_k")) {
    label += " sk" + text(axes, "split_k");
  }
  if (axes.contains("add_inputs")) {
    label += axes.value("add_inputs", false) ? " add" : " noadd";
  }
  label += " " + text(axes, "compiler");
  return label;
}

std::string format_verdict_table(const std::vector<report::CaseRecord>& cases) {
  std::vector<std::string> rows;
  std::map<std::string, std::map<std::int64_t, char>> cells;
  std::set<std::int64_t> tokens;
  for (const report::CaseRecord& c : cases) {
    json key = c.axes;
    key.erase("tokens");
    const std::string label = row_label(key);
    if (cells.count(label) == 0) {
      rows.push_back(label);
    }
    const std::int64_t t = c.axes.value("tokens", std::int64_t{0});
    tokens.insert(t);
    cells[label][t] = report::verdict_letter(c.verdict);
  }
  if (rows.empty()) {
    return "no cases ran\n";
  }
  std::size_t width = 0;
  for (const std::string& r : rows) {
    width = std::max(width, r.size());
  }
  std::string out = fmt::format("{:<{}}", "tokens:", width);
  for (std::int64_t t : tokens) {
    out += fmt::format(" {:>5}", t);
  }
  out += "\n";
  for (const std::string& r : rows) {
    out += fmt::format("{:<{}}", r, width);
    for (std::int64_t t : tokens) {
      const auto it = cells[r].find(t);
      out += fmt::format(" {:>5}", it == cells[r].end() ? '.' : it->second);
    }
    out += "\n";
  }
  out += "P PASS  F FAIL  L LATENT (static hazard, not observed)  i incomplete  f fault  t timeout  c compile_error  s skipped\n";
  return out;
}

}  // namespace lp::formats
