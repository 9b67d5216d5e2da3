#pragma once
// How a plan is shown: the dry-run table and its JSON twin.

#include <string>

#include <nlohmann/json.hpp>

#include "plan/config.hpp"
#include "plan/plan.hpp"

namespace lp::cli {

/// Header lines (counts, what was dropped and why) and one row per case.
std::string format_plan(const plan::SweepConfig& config, const plan::Plan& p);

/// {"config", "count", "combinations", "not_applicable", "excluded_by_rule", "duplicates", "cases"}.
nlohmann::json plan_to_json(const plan::SweepConfig& config, const plan::Plan& p);

}  // namespace lp::cli
