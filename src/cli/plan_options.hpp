#pragma once
// What decides a plan, spelled the same in `sweep` and `inspect`: a config file and
// the flags over it (every axis flag of plan/axes.cpp, --model and --tp, and vLLM's
// --vllm-configs, --vllm-gpu, --vllm-batch-invariant). Both commands bind this one
// struct, so `inspect --model qwen3-8b --tokens 256` asks the static question exactly
// as `sweep --model qwen3-8b --tokens 256` plans it.

#include <set>
#include <string>

#include <CLI/CLI.hpp>

#include "plan/axes.hpp"
#include "plan/config.hpp"

namespace lp::cli {

struct PlanOptions {
  std::string config_path;    ///< -c/--config: a file or an embedded config's name (plan::load_config); empty: the default
  plan::FlagOverrides flags;  ///< applied by plan::apply_flags over the config

  /// Whether the command line says anything about the plan: --config or any flag here.
  [[nodiscard]] bool given() const;
  /// The config file (or the embedded default) with the flags applied; its notes
  /// (deprecated spellings) printed on stderr.
  [[nodiscard]] plan::SweepConfig resolve() const;
};

/// Binds -c/--config, one flag per axis (and the deprecated spellings), --model, --tp,
/// --vllm-configs, --vllm-gpu and --vllm-batch-invariant. The axes in `bound_elsewhere`
/// are left to the command (inspect's --triton and --compiler, which also work without
/// a plan).
void add_plan_options(CLI::App& sub, PlanOptions& o, const std::set<plan::AxisId>& bound_elsewhere = {});

}  // namespace lp::cli
