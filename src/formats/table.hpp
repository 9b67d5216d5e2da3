#pragma once
// The verdict table printed at the end of a sweep: one row per configuration
// (every axis but tokens), one column per token count, one letter per cell.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace lp::formats {

/// Rows in first-seen plan order, token columns ascending; P F L i f t c s (see
/// report::verdict_letter), '.' where the plan has no such case, ' ' not run.
std::string format_verdict_table(const std::vector<report::CaseRecord>& cases);

/// A short label of a case's configuration: "expand fp32>bf16 r64 h4096 m64n128k32 w4s2 add prebuilt".
std::string row_label(const nlohmann::json& axes);

}  // namespace lp::formats
