#pragma once
// The plan of a model preset (--model): the model's projections as vLLM 0.34.0 runs
// them, planned through expand_plan one projection at a time (plan.cpp), with the
// knobs vLLM picks and the routed experts as fused-MoE fast-path cases. Internal to
// lp_plan: callers use expand_plan.

#include <cstdint>
#include <string>
#include <vector>

#include "plan/config.hpp"
#include "plan/plan.hpp"

namespace lp::plan {

/// The plan of `config`, whose model is set.
Plan expand_model_plan(const SweepConfig& config, const std::vector<std::string>& available);

/// Adds `count` to `reason`'s entry, keeping first-seen order for stable output.
void count_reason(std::vector<Dropped>& dropped, std::string reason, std::size_t count = 1);

/// The engine's max_loras for case `c`: vLLM's --max-loras when given (`max_loras` >
/// 0), else the case's adapters, at least vLLM's default 1.
inline std::int64_t engine_max_loras(std::int64_t max_loras, const Case& c) {
  return max_loras > 0 ? max_loras : (c.num_loras > 1 ? c.num_loras : 1);
}

}  // namespace lp::plan
