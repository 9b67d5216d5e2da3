#include "plan/model_plan.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <map>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/models.hpp"
#include "plan/moe_configs.hpp"
#include "plan/tuned.hpp"
#include "plan/vllm_defaults.hpp"
#include "util/error.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

/// What the model plan's fused-MoE cases depend on besides the shape: the engine's
/// max_loras, where vLLM takes BLOCK_SIZE_M from, and the GPU's SM count.
struct FusedMoeEngine {
  std::int64_t max_loras = 0;  ///< vLLM's --max-loras; 0: engine_max_loras' default
  /// VLLM_TUNED_CONFIG_FOLDER is set (or VLLM_BATCH_INVARIANT): vLLM takes
  /// get_lora_op_configs' fused_moe_lora BLOCK_SIZE_M, not the MoE layer's.
  bool lora_op_configs = false;
  std::string moe_configs_dir;  ///< --vllm-moe-configs: vLLM's per-GPU MoE configs
  std::string gpu;              ///< the GPU whose files are read
  std::int64_t sm_count = k_default_sm_count;
  /// --vllm-configs' files (outside batch invariance): the fused-MoE LoRA ones give BLOCK_SIZE_M.
  std::shared_ptr<const TunedConfigs> tuned;
};

/// The routing's BLOCK_M for a fast-path case, where it came from (the case's `tuned`
/// text), or why vLLM fails to pick one (`error`).
struct FusedMoeBlockM {
  int block_m = 0;
  std::string source;
  std::string error;
};

/// FusedMoeBlockM of a case of `shape`'s tokens and rank on projection `p`.
FusedMoeBlockM fused_moe_block_m(const Case& shape, const Projection& p, const FusedMoeEngine& e) {
  const FusedMoeDefaults& f = vllm_defaults().fused_moe;
  const std::int64_t tokens = shape.tokens;
  // The MoE layer's N is the experts' intermediate width per rank: gate/up's slice, down's input.
  const bool down = p.out.size() == 1;
  const std::int64_t inter = down ? p.in : p.out.at(0);
  if (e.lora_op_configs) {
    if (e.tuned) {
      const std::int64_t hidden = down ? p.out.at(0) : p.in;
      if (const std::optional<TunedChoice> c =
              e.tuned->fused_moe_shrink(!down, engine_max_loras(e.max_loras, shape),
                                        static_cast<std::int64_t>(p.out.size()), tokens, shape.rank, hidden, inter)) {
        if (!c->vllm_error.empty()) {
          return {0, {}, c->vllm_error};
        }
        return {c->knobs.block_m, fmt::format("block_m {}: {}", c->knobs.block_m, c->describe()), {}};
      }
    }
    return {f.block_m, fmt::format("block_m {}: vLLM's fused_moe_lora default", f.block_m), {}};
  }
  if (!e.moe_configs_dir.empty()) {
    if (const std::optional<MoeConfigChoice> c = moe_config_block_m(e.moe_configs_dir, p.num_experts, inter, e.gpu, tokens)) {
      return {c->block_m, fmt::format("block_m {}: {}[{}]", c->block_m, c->file, c->key), {}};
    }
  }
  const int block_m = f.block_m_for(tokens);
  return {block_m,
          fmt::format("block_m {}: vLLM's get_default_config for {} tokens ({})", block_m, tokens,
                      e.moe_configs_dir.empty()
                          ? "without --vllm-moe-configs; vLLM reads its own file for the GPU first"
                          : "no " + moe_config_file_name(p.num_experts, inter, e.gpu) + " in --vllm-moe-configs"),
          {}};
}

/// Why vLLM 0.34.0 does not launch its fused-MoE fast path, as loraprobe's sets carry it,
/// for `shape` on projection `p`; empty when it does.
std::string fused_moe_not_launched(const Case& shape, const Projection& p, const FusedMoeEngine& engine) {
  const FusedMoeDefaults& f = vllm_defaults().fused_moe;
  if (shape.rank > f.max_rank) {
    return fmt::format("vLLM's fused-MoE LoRA fast path takes rank <= {}; larger ranks take its two-kernel path, "
                       "which loraprobe inspects but does not launch",
                       f.max_rank);
  }
  if (shape.tokens <= f.two_kernel_max_tokens) {
    return fmt::format("vLLM 0.34.0 runs a batch of at most {} tokens through its two-kernel fused-MoE LoRA path "
                       "(FUSED_MOE_LORA_TWO_KERNEL_MAX_TOKENS), which loraprobe inspects but does not launch",
                       f.two_kernel_max_tokens);
  }
  if (shape.tokens * p.top_k * f.naive_sparsity_factor <= p.num_experts * engine_max_loras(engine.max_loras, shape)) {
    return "vLLM routes so few tokens per expert naively (tokens x top_k x 8 <= experts x max_loras), and its fast "
           "path (or, for a small batch, its small-batch kernel) then reads no sorted token ids, a variant "
           "loraprobe's sets do not carry";
  }
  return {};
}

/// The routed experts' LoRA as vLLM's fused-MoE fast path runs it: one case per shape
/// of the expand sub-plan (tokens, rank, adapters, dtypes, add_inputs, Triton,
/// compiler, amplify), with the fast path's knobs. Returns why a shape has no fused case
/// through `why`, else the case.
std::optional<Case> fused_moe_case(const Case& shape, const Projection& p, const FusedMoeEngine& engine,
                                   std::string& why) {
  why = fused_moe_not_launched(shape, p, engine);
  if (!why.empty()) {
    return std::nullopt;
  }
  const FusedMoeBlockM block = fused_moe_block_m(shape, p, engine);
  if (!block.error.empty()) {
    why = block.error;
    return std::nullopt;
  }
  Case c = shape;
  c.op = Op::fused_moe;
  c.hidden = p.out;
  c.num_slices = static_cast<int>(p.out.size());
  c.input_dtype = c.weight_dtype;
  c.shrink.reset();
  const int block_m = block.block_m;
  c.set_tuned(block.source);
  // vLLM's grid has num_active_loras adapter programs: lora_ids' size, max_loras + 1
  // (lora_kernel_metadata.py, specialize_active_lora off by default).
  const std::int64_t lora_programs = engine_max_loras(engine.max_loras, shape) + 1;
  const FusedMoeLaunch launch = vllm_fused_moe_launch(c.tokens, p.top_k, p.num_experts, p.in, p.out.at(0),
                                                      c.num_slices, lora_programs, block_m, engine.sm_count);
  c.expand = launch.knobs;
  c.set_fused_moe(FusedMoeCase{p.in, static_cast<int>(p.num_experts), static_cast<int>(p.top_k), p.out.size() == 1,
                               launch.npid_factor});
  c.id = case_id(c);
  return c;
}

/// The kernel knobs a model plan leaves to vLLM.
constexpr std::array<AxisId, 6> k_knob_axes = {AxisId::block_m,   AxisId::block_n,    AxisId::block_k,
                                               AxisId::num_warps, AxisId::num_stages, AxisId::split_k};

constexpr const char* k_knobs_reason =
    "a model plan runs the knobs vLLM 0.34.0 launches for each projection (its defaults, or --vllm-configs' tuned "
    "files); --remedies runs block_n 32 and num_stages 1 beside a hazardous case, and a sweep without --model takes "
    "any knob";

/// A knob flag beside --model asks for what the plan does not run: refused, naming it.
void refuse_knob_flags(const SweepConfig& config) {
  for (AxisId knob : k_knob_axes) {
    const auto& axis = config.axes.at(knob);
    const bool only_vllm = std::all_of(axis.value.begin(), axis.value.end(),
                                       [](const AxisValue& v) { return v == AxisValue::from_json("vllm"); });
    if (axis.origin.kind == Origin::Kind::flag && !only_vllm) {
      throw UsageError(fmt::format("{} with --model: {}", axis.origin.where, k_knobs_reason));
    }
  }
}

/// The sub-config that plans projection `p`'s cases of `op`: its slices and widths, for
/// a fused-MoE projection x in the weight dtype, and with `vllm_knobs` the knobs vLLM
/// picks for it (else the config's, to count what the plan leaves out).
SweepConfig projection_config(const SweepConfig& config, const Projection& p, const char* op, bool fused,
                              bool vllm_knobs) {
  const bool chain = op == std::string("lora_linear");
  SweepConfig sub = config;
  sub.model.value.reset();
  sub.axes[AxisId::op].value = {AxisValue::from_json(op)};
  sub.axes[AxisId::num_slices].value = {AxisValue::from_json(p.out.size())};
  sub.axes[AxisId::hidden].value = {AxisValue::from_json(op == std::string("expand") || chain ? json(p.out) : json(p.in))};
  if (vllm_knobs) {
    for (AxisId knob : k_knob_axes) {
      sub.axes[knob].value = {AxisValue::from_json("vllm")};
    }
  }
  if (fused) {
    // The fast path's knobs are vllm_fused_moe_launch's: the sub-plan only supplies the
    // other axes' product.
    sub.axes[AxisId::input_dtype].value = {AxisValue::from_json("bf16")};
    sub.vllm_configs.value.reset();
  }
  return sub;
}

/// Projection `p`'s sub-plan of `op`: the cases of vLLM's knobs, with the counts of the
/// config's own (its combinations, what is not applicable or excluded), and the
/// config's cases that vLLM's knobs leave out counted as not applicable.
Plan projection_plan(const SweepConfig& config, const Projection& p, const char* op, bool fused,
                     const std::vector<std::string>& available) {
  Plan asked = expand_plan(projection_config(config, p, op, fused, false), available);
  Plan part = expand_plan(projection_config(config, p, op, fused, true), available);
  std::unordered_set<std::string> planned;
  for (const Case& c : part.cases) {
    planned.insert(c.id);
  }
  std::unordered_set<std::string> in_config;
  for (const Case& c : asked.cases) {
    in_config.insert(c.id);
  }
  const auto left_out = static_cast<std::size_t>(
      std::count_if(asked.cases.begin(), asked.cases.end(), [&](const Case& c) { return planned.count(c.id) == 0; }));
  if (left_out > 0) {
    count_reason(asked.not_applicable, k_knobs_reason, left_out);
  }
  part.added_by_vllm = static_cast<std::size_t>(
      std::count_if(part.cases.begin(), part.cases.end(), [&](const Case& c) { return in_config.count(c.id) == 0; }));
  part.combinations = asked.combinations;
  part.duplicates = asked.duplicates;
  part.not_applicable = std::move(asked.not_applicable);
  part.excluded_by_rule = std::move(asked.excluded_by_rule);
  return part;
}

/// `part`'s cases as fused-MoE cases of projection `p` (those vLLM takes the fast path for).
void convert_to_fused(Plan& part, const Projection& p, const FusedMoeEngine& engine) {
  std::deque<Case> converted;
  for (const Case& shape : part.cases) {
    std::string why;
    std::optional<Case> c = fused_moe_case(shape, p, engine, why);
    if (!c) {
      count_reason(part.not_applicable, why);
      continue;
    }
    converted.push_back(std::move(*c));
  }
  part.cases = std::move(converted);
}

/// Adds projection `p`'s sub-plan to `out`: its counts, and its cases, a case that
/// another projection planned already shared (its projection list grows).
void merge_part(Plan& part, const Projection& p, Plan& out, std::map<std::string, std::size_t>& at) {
  out.combinations += part.combinations;
  out.duplicates += part.duplicates;
  out.added_by_vllm += part.added_by_vllm;
  for (const Dropped& d : part.not_applicable) {
    count_reason(out.not_applicable, d.reason, d.count);
  }
  out.excluded_by_rule.resize(part.excluded_by_rule.size(), 0);
  for (std::size_t i = 0; i < part.excluded_by_rule.size(); ++i) {
    out.excluded_by_rule[i] += part.excluded_by_rule[i];
  }
  for (Case& c : part.cases) {
    if (const auto it = at.find(c.id); it != at.end()) {
      Case& shared = out.cases[it->second];
      shared.set_projection(shared.projection() + "," + p.name);
      ++out.shared_by_projections;
      continue;
    }
    c.set_projection(p.name);
    c.index = out.cases.size();
    at.emplace(c.id, c.index);
    out.cases.push_back(std::move(c));
  }
}

FusedMoeEngine fused_moe_engine(const SweepConfig& config) {
  FusedMoeEngine e;
  e.max_loras = config.vllm_max_loras.value;
  if (config.sm_count.value > 0) {
    e.sm_count = config.sm_count.value;
  }
  e.lora_op_configs = config.vllm_batch_invariant.value || config.vllm_configs.value.has_value();
  if (config.vllm_moe_configs.value) {
    e.moe_configs_dir = config.vllm_moe_configs.value->dir;
  }
  const auto gpu_of = [](const std::optional<VllmConfigs>& v) {
    return v && !v->gpu.empty() ? v->gpu : std::string(k_default_vllm_gpu);
  };
  e.gpu = gpu_of(config.vllm_moe_configs.value);
  if (config.vllm_configs.value && !config.vllm_batch_invariant.value) {
    const VllmConfigs& v = *config.vllm_configs.value;
    e.tuned = std::make_shared<const TunedConfigs>(TunedConfigs::load(v.dir, gpu_of(v)));
  }
  return e;
}

/// The ops a model plan plans: the config's, but for the FP8 ones, named as not swept.
constexpr std::array<const char*, 3> k_model_ops = {"expand", "shrink", "lora_linear"};

void name_unplanned_ops(const SweepConfig& config, Plan& out) {
  for (const AxisValue& op : config.values(AxisId::op)) {
    const std::string name = op.to_json().get<std::string>();
    if (std::none_of(k_model_ops.begin(), k_model_ops.end(), [&](const char* m_op) { return name == m_op; })) {
      out.not_swept.push_back({"op " + name, "a model preset plans the LoRA kernels vLLM 0.34.0 launches for it "
                                             "(expand, shrink, lora_linear and the routed experts' fused-MoE); "
                                             "nothing in vLLM 0.34.0 launches its FP8 LoRA ops, so sweep those "
                                             "with --config fp8"});
    }
  }
}

}  // namespace

/// --model: the plan over the model's projections instead of the num_slices and hidden
/// axes. Each projection is an expand shape (its slices' widths) and a shrink shape
/// (its input, one output per slice); the other axes multiply as usual. One shape that
/// two projections share (o_proj's and down_proj's expand) is one case, labelled with both.
Plan expand_model_plan(const SweepConfig& config, const std::vector<std::string>& available) {
  refuse_knob_flags(config);
  const ModelChoice& m = *config.model.value;
  Plan out;
  std::map<std::string, std::size_t> at;  // id -> index in out
  const std::vector<AxisValue>& ops = config.values(AxisId::op);
  const auto wanted = [&](const char* op) { return std::find(ops.begin(), ops.end(), AxisValue::from_json(op)) != ops.end(); };
  name_unplanned_ops(config, out);
  const FusedMoeEngine moe_engine = fused_moe_engine(config);
  for (const Projection& p : projections(find_model(m.name), m.tp)) {
    const bool fused = p.kernel == LoraKernel::fused_moe;
    if (fused && !wanted("expand")) {
      out.not_swept.push_back({p.name, "vLLM runs the routed experts' LoRA as one fused-MoE kernel (shrink and expand "
                                       "in one launch), which the plan includes with --op expand"});
      continue;
    }
    for (const char* op : k_model_ops) {
      if (!wanted(op) || (fused && op != std::string("expand"))) {
        continue;  // the fused kernel is the projection's shrink and expand in one: planned once
      }
      if (op == std::string("lora_linear") &&
          std::any_of(p.out.begin(), p.out.end(), [&](std::int64_t n) { return n != p.in; })) {
        // The chain's host model has one width for x and every slice of y (docs/problem.md).
        out.not_swept.push_back({p.name, "the shrink->expand chain (op lora_linear, --vllm-dual-stream) is modelled "
                                         "for projections whose input and output widths are equal; sweep this one's "
                                         "expand and shrink apart (--op expand,shrink)"});
        continue;
      }
      Plan part = projection_plan(config, p, op, fused, available);
      if (fused) {
        convert_to_fused(part, p, moe_engine);
      }
      merge_part(part, p, out, at);
    }
  }
  return out;
}

}  // namespace lp::plan
