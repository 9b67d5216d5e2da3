#pragma once
// The verdict table printed at the end of a sweep: one row per configuration
// (every axis but tokens), one column per token count, one letter per cell.

#include <cstdint>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace lp::report {

/// One configuration (every axis but tokens) of the verdict map.
struct MapRow {
  std::string label;              ///< plan::row_label() of the configuration
  std::string group;              ///< "Triton 3.6.0 prebuilt expand"
  std::vector<char> cells;         ///< one verdict letter per token column; '.' not planned
  std::vector<std::size_t> cases;  ///< per cell: the case's number in the store (k_no_case for '.')
  bool all_pass = true;            ///< every planned cell is PASS
};

/// Rows in first-seen plan order, token columns ascending.
struct VerdictMap {
  std::vector<std::int64_t> tokens;
  std::vector<MapRow> rows;
};

/// MapRow::cases of a cell the plan has no case for.
inline constexpr std::size_t k_no_case = static_cast<std::size_t>(-1);

VerdictMap verdict_map(const CaseStore& cases);

/// A cell's tip (the HTML map's hover text): "<tokens> tokens: <verdict> (case <id>),
/// worst deviation <x> of tolerance". Made when drawn, from the case: a map of a
/// million cases keeps a number per cell, not a sentence.
std::string cell_tip(const CaseRecord& c);

/// The legend of the letters.
inline constexpr const char* k_verdict_legend =
    "P PASS  F FAIL  L LATENT (static hazard, not observed)  i incomplete  f fault  t timeout  c compile_error  "
    "s skipped  x incompatible";

/// Rows in first-seen plan order, token columns ascending; P F L i f t c s x (see
/// report::verdict_letter), '.' where the plan has no such case, ' ' not run.
std::string format_verdict_table(const CaseStore& cases);

}  // namespace lp::report
