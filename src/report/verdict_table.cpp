#include "report/verdict_table.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "plan/axes.hpp"

namespace lp::report {


VerdictMap verdict_map(const CaseStore& cases) {
  VerdictMap map;
  std::map<std::string, std::size_t> row_of;
  std::set<std::int64_t> tokens;
  for (const CaseRecord& c : cases) {
    tokens.insert(c.axes.integer("tokens").value_or(0));
  }
  map.tokens.assign(tokens.begin(), tokens.end());
  std::size_t at = 0;
  for (const CaseRecord& c : cases) {
    const std::size_t number = at++;
    const std::string label = plan::row_label(c.axes);  // every axis but tokens
    auto [it, added] = row_of.emplace(label, map.rows.size());
    if (added) {
      MapRow row;
      row.label = label;
      row.group = fmt::format("Triton {} {} {}", plan::axis_text(c.axes, "triton"), plan::axis_text(c.axes, "compiler"), plan::axis_text(c.axes, "op"));
      row.cells.assign(map.tokens.size(), '.');
      row.cases.assign(map.tokens.size(), k_no_case);
      map.rows.push_back(std::move(row));
    }
    MapRow& row = map.rows[it->second];
    const std::int64_t t = c.axes.integer("tokens").value_or(0);
    const std::size_t col =
        static_cast<std::size_t>(std::lower_bound(map.tokens.begin(), map.tokens.end(), t) - map.tokens.begin());
    row.cells[col] = verdict_letter(c.verdict);
    row.all_pass = row.all_pass && c.verdict == Verdict::pass;
    row.cases[col] = number;
  }
  return map;
}

std::string cell_tip(const CaseRecord& c) {
  std::string tip =
      fmt::format("{} tokens: {} (case {})", c.axes.integer("tokens").value_or(0), to_string(c.verdict), c.id);
  if (c.metrics) {
    // A non-finite deviation in the quotes of its JSON spelling ("inf"), as it always was.
    const double dev = c.metrics->worst_dev_over_tolerance;
    tip += fmt::format(", worst deviation {} of tolerance",
                       std::isfinite(dev) ? fmt::format("{:.3g}", dev)
                                          : fmt::format("\"{}\"", std::isnan(dev) ? "nan" : dev > 0 ? "inf" : "-inf"));
  }
  return tip;
}

std::string format_verdict_table(const CaseStore& cases) {
  const VerdictMap map = verdict_map(cases);
  if (map.rows.empty()) {
    return "no cases ran\n";
  }
  std::size_t width = 0;
  for (const MapRow& r : map.rows) {
    width = std::max(width, r.label.size());
  }
  std::string out = fmt::format("{:<{}}", "tokens:", width);
  for (std::int64_t t : map.tokens) {
    out += fmt::format(" {:>5}", t);
  }
  out += "\n";
  for (const MapRow& r : map.rows) {
    out += fmt::format("{:<{}}", r.label, width);
    for (char cell : r.cells) {
      out += fmt::format(" {:>5}", cell);
    }
    out += "\n";
  }
  out += k_verdict_legend;
  out += "\n";
  return out;
}

}  // namespace lp::report
