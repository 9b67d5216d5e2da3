#pragma once
// How a plan is shown: the dry-run table (its JSON twin is plan::write_plan_json).

#include <cstdio>
#include <string>

#include "plan/config.hpp"
#include "plan/plan.hpp"

namespace lp::cli {

/// Writes header lines (counts, what was dropped and why) and one row per case,
/// row by row.
void print_plan(std::FILE* file, const plan::SweepConfig& config, const plan::Plan& p);

}  // namespace lp::cli
