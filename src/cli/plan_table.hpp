#pragma once
// How a plan is shown: the dry-run table and its JSON twin.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include <cstdio>

#include "plan/config.hpp"
#include "plan/plan.hpp"

namespace lp::cli {

/// Writes header lines (counts, what was dropped and why) and one row per case,
/// row by row.
void print_plan(std::FILE* file, const plan::SweepConfig& config, const plan::Plan& p);

/// Writes {"config", "count", "combinations", "not_applicable", "excluded_by_rule",
/// "duplicates", "cases"}, one case per line as it goes.
void print_plan_json(std::FILE* file, const plan::SweepConfig& config, const plan::Plan& p);

}  // namespace lp::cli
