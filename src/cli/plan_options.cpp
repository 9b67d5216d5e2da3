#include "cli/plan_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/app.hpp"
#include "cli/validators.hpp"

namespace lp::cli {

bool PlanOptions::given() const {
  return !config_path.empty() || !flags.axes.empty() || flags.model || flags.tp || flags.vllm_configs ||
         flags.vllm_gpu || flags.vllm_batch_invariant || flags.vllm_dual_stream || flags.vllm_max_loras ||
         flags.sm_count || flags.vllm_moe_configs;
}

plan::SweepConfig PlanOptions::resolve() const {
  plan::SweepConfig config = config_path.empty() ? plan::load_default_config() : plan::load_config(config_path);
  plan::apply_flags(config, flags);
  print_notes(config.notes);
  return config;
}

void add_plan_options(CLI::App& sub, PlanOptions& o, const std::set<plan::AxisId>& bound_elsewhere) {
  sub.add_option("-c,--config", o.config_path,
                 fmt::format("Sweep config: an embedded one by name ({}: loraprobe list --configs) or a JSON file "
                             "(configs/schema/config.schema.json; a value with '/' or ending in .json is a file); "
                             "default: the embedded default",
                             fmt::join(plan::embedded_config_stems(), ", ")))
      ->check(non_empty());
  for (const plan::AxisInfo& axis : plan::axis_table()) {
    const plan::AxisId id = axis.id;
    if (bound_elsewhere.count(id) > 0) {
      continue;
    }
    auto* opt = sub.add_option_function<std::vector<std::string>>(
        std::string(axis.flag), [&o, id](const std::vector<std::string>& v) { o.flags.axes[id] = v; },
        fmt::format("Override axis {}: {}", axis.key, axis.description));
    opt->group("Axes (replace the config's values; lists '256,384', ranges '16..8192*2' or '16..128+16')");
    opt->allow_extra_args(false);
    if (axis.kind == plan::AxisKind::compiler) {
      opt->take_all();
    }
    if (!axis.old_flag.empty()) {
      const std::string old_flag(axis.old_flag);
      const std::string new_flag(axis.flag);
      sub.add_option_function<std::vector<std::string>>(
             old_flag,
             [&o, id, old_flag, new_flag](const std::vector<std::string>& v) {
               print_notes({fmt::format("{}: write {} ({} is deprecated)", old_flag, new_flag, old_flag)});
               o.flags.axes[id] = v;
             },
             "Deprecated spelling of " + new_flag)
          ->allow_extra_args(false)
          ->group("");
    }
  }
  sub.add_option("--model", o.flags.model,
                 "A model's LoRA projections (attention, linear attention, MLP, shared expert; loraprobe list "
                 "--models) instead of the num_slices and hidden axes")
      ->check(non_empty());
  sub.add_option("--tp", o.flags.tp, "With --model: tensor parallelism, dividing the sizes vLLM shards");
  sub.add_option("--vllm-configs", o.flags.vllm_configs,
                 "vLLM's tuned LoRA config folder (VLLM_TUNED_CONFIG_FOLDER): every \"vllm\" knob is what vLLM "
                 "launches with these files, and each case names the entry that chose it")
      ->check(non_empty());
  sub.add_option("--vllm-moe-configs", o.flags.vllm_moe_configs,
                 "With --model: vLLM's per-GPU fused-MoE configs (its model_executor/layers/fused_moe/configs): the "
                 "routing's BLOCK_SIZE_M of the routed experts, as vLLM takes it when no tuned folder is set; "
                 "loraprobe check passes the installed vLLM's")
      ->check(non_empty());
  sub.add_option("--vllm-gpu", o.flags.vllm_gpu,
                 "The GPU name of the tuned files (NVIDIA H200 reads NVIDIA_H200_*.json and "
                 "E=..,N=..,device_name=NVIDIA_H200.json); default: the GPU present, or an NVIDIA H100 80GB HBM3 "
                 "without a GPU")
      ->check(non_empty());
  sub.add_option("--max-loras", o.flags.vllm_max_loras,
                 "vLLM's --max-loras (default: each case's num_loras, at least vLLM's 1): its tuned files are keyed "
                 "by max_loras + 1, and a batch holds at most that many adapters");
  sub.add_option("--sm-count", o.flags.sm_count,
                 "The SM count vLLM's fused-MoE LoRA sizes its N split (NPID_FACTOR) by: default the GPU's in a run, "
                 "132 (an H100 SXM or H200) in a dry run; an H20 has 78, an H100 PCIe 114")
      ->check(non_empty());
  sub.add_flag("--vllm-batch-invariant", o.flags.vllm_batch_invariant,
               "As vLLM with VLLM_BATCH_INVARIANT=1: the tuned files are skipped and the default shrink has split_k 1");
  sub.add_flag("--vllm-dual-stream", o.flags.vllm_dual_stream,
               "As vLLM with VLLM_LORA_ENABLE_DUAL_STREAM=1 on sm_90: each LoRA layer's shrink then expand as one "
               "chain (op lora_linear, gdc true, add_inputs false), the expand launched with programmatic dependent "
               "launch");
}

}  // namespace lp::cli
