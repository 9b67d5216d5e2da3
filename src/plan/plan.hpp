#pragma once
// Plan expansion: the cartesian product of a config's axes, with per-op axes
// collapsed, "vllm" defaults resolved, excludes and duplicates removed, in a
// deterministic order, each case with a stable id.

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/compiler.hpp"

#include "plan/axes.hpp"
#include "plan/config.hpp"

namespace lp::plan {

/// Launch knobs of one Triton kernel (constexprs plus num_warps/num_stages).
struct KernelKnobs {
  int block_m = 0;
  int block_n = 0;
  int block_k = 0;
  int num_warps = 0;
  int num_stages = 0;
  int split_k = 1;      ///< shrink only; 1 for expand
  bool even_k = false;  ///< K is a multiple of BLOCK_K (times SPLIT_K for shrink): no masked tail
  /// The launch's num_ctas: vLLM passes a tuned file's to the launch. Every embedded
  /// variant is built with Triton's default, 1; another value finds no variant.
  int num_ctas = 1;
  /// Shrink only: GROUP_SIZE_M (vLLM's default 8, or a tuned file's); 0 for expand.
  int group_size_m = 0;
  bool operator==(const KernelKnobs&) const = default;
};

/// What a fused_moe case routes, beyond the expand-like fields (hidden is N per slice).
struct FusedMoeCase {
  std::int64_t hidden_in = 0;      ///< K, the width of x
  int num_experts = 0;
  int top_k = 0;
  bool mul_routed_weight = false;  ///< the down projection: a row of x per pair, scaled by its weight
  int npid_factor = 1;             ///< the kernel's NPID_FACTOR (vllm_fused_moe_launch)
  bool operator==(const FusedMoeCase&) const = default;
};

/// One point of the sweep.
struct Case {
  std::size_t index = 0;  ///< position in plan order
  std::string id;         ///< 12 hex digits of sha256(axes.dump()): stable across runs and hosts
  Op op = Op::expand;
  std::int64_t tokens = 0;
  std::int64_t rank = 0;
  std::vector<std::int64_t> hidden;  ///< one size per slice
  int num_slices = 1;
  int num_loras = 1;
  DType input_dtype = DType::f32;  ///< expand: buf; shrink: x; lora_linear: x (= weight dtype)
  DType weight_dtype = DType::bf16;
  bool add_inputs = false;            ///< expand, lora_linear and fused_moe
  /// lora_linear: vLLM's dual-stream chain (USE_GDC, the expand launched with
  /// programmatic dependent launch after a slow-tailed shrink); in the axes only when on.
  bool gdc = false;
  /// The FP8 families' scales: the block-wise group, or 0 for per tensor (Problem's
  /// scale_group); in the axes only for a family with scale_group_axis.
  int scale_group = 0;
  /// expand and lora_linear; for fused_moe, its one kernel's (it ends in the expand)
  std::optional<KernelKnobs> expand;
  std::optional<KernelKnobs> shrink;  ///< shrink and lora_linear
  compile::Compiler compiler;
  /// Dependent wgmma pairs queued before each register-A wgmma of the expand kernel
  /// (src/ptx/amplify.hpp); 0 runs the variant's own PTX. In the id only when above 0,
  /// so an unamplified case keeps the id it always had.
  int amplify = 0;
  std::string triton;   ///< the Triton version whose kernel set the case runs
  /// A synthesised case's own axes (the controls'); null for a planned case, whose
  /// axes are computed from its fields (a plan of millions of cases keeps none, and
  /// this pointer is all a planned case pays: scripts/bench/plan_memory.sh).
  std::shared_ptr<const AxisValues> own_axes;
  /// --model: the projections this shape is ("qkv_proj", "o_proj,down_proj"); in axes()
  /// but not in the id, which is the kernel problem's alone. Empty without --model.
  [[nodiscard]] const std::string& projection() const noexcept;
  void set_projection(std::string projection);
  /// --vllm-configs: the tuned-config entry that chose the knobs, or why none did; in
  /// axes() but not in the id. Empty without --vllm-configs.
  [[nodiscard]] const std::string& tuned() const noexcept;
  void set_tuned(std::string tuned);
  /// fused_moe only: the routing and NPID_FACTOR; nullptr for the other ops.
  [[nodiscard]] const FusedMoeCase* fused_moe() const noexcept;
  void set_fused_moe(std::optional<FusedMoeCase> fused);

  /// The canonical axis values: what the id hashes and reports print.
  [[nodiscard]] AxisValues axes() const;

 private:
  /// What few cases have, in one shared block copied on write, so a case of a plan of
  /// millions pays one pointer for all three (scripts/bench/plan_memory.sh).
  struct Extras {
    std::string projection;
    std::string tuned;
    std::optional<FusedMoeCase> fused_moe;
  };
  Extras& extras();
  std::shared_ptr<const Extras> m_extras;
};

/// Why combinations of the cartesian product did not become cases.
struct Dropped {
  std::string reason;
  std::size_t count = 0;
};

/// --model: a projection of the model that the plan does not cover, and why.
struct NotSwept {
  std::string projection;  ///< "experts.gate_up_proj"
  std::string why;
};

/// The expanded sweep.
struct Plan {
  /// A deque: it grows by blocks, so a plan near the case cap is never copied whole
  /// (a vector doubling to 8 million cases would), and references stay valid.
  std::deque<Case> cases;
  std::size_t combinations = 0;            ///< size of the cartesian product
  std::vector<Dropped> not_applicable;     ///< combinations that make no sense (reason, count)
  std::vector<std::size_t> excluded_by_rule;  ///< per config exclude rule
  std::size_t duplicates = 0;              ///< combinations equal to an earlier case after resolving "vllm"
  std::size_t shared_by_projections = 0;   ///< --model: cases a projection shares with an earlier one
  /// --model: cases of vLLM's own knobs for a projection that the config's knob values
  /// do not name (a config of block_n 128 and 32 gets vLLM's 64 for 2 and 3 slices)
  std::size_t added_by_vllm = 0;
  /// --model: the projections no case covers (a MoE model's routed experts), so that a
  /// clean run never reads as "the whole model is clean".
  std::vector<NotSwept> not_swept;
  /// A dry run's: the cases whose kernel set holds no variant for them, counted by why
  /// ("Triton 3.8.0: no expand variant with ..."); nullopt where the variants were not
  /// looked up (the plan alone knows no kernel set).
  std::optional<std::vector<Dropped>> without_variant;
};

/// Largest cartesian product and plan accepted (lp::UsageError beyond).
inline constexpr std::size_t k_max_combinations = 5'000'000;

/// vLLM's default expand knobs for `num_slices` (configs/vllm/defaults.json: 64/128/32,
/// 4 warps, 2 stages; block_n 64 when num_slices > 1).
KernelKnobs vllm_expand_defaults(int num_slices);
/// vLLM's default shrink knobs for `tokens` (configs/vllm/defaults.json: block_k 256 and
/// split_k 64 below 128 tokens, else 32 and 8; block_m 32, block_n 16, 4 warps, 2 stages,
/// group_size_m 8). `batch_invariant` (VLLM_BATCH_INVARIANT): split_k 1, as vLLM forces it.
KernelKnobs vllm_shrink_defaults(std::int64_t tokens, bool batch_invariant = false);

/// The `triton` axis of `config` resolved against the kernel sets of the run
/// (`available`, in order): "all" becomes every one of them, duplicates go. A version
/// without a set throws lp::UsageError ("--triton 3.5.0: ...") or lp::InputError
/// ("<file>:/axes/triton: ..."), naming the versions there are.
std::vector<std::string> resolve_tritons(const SweepConfig& config, const std::vector<std::string>& available);

/// Expands `config` into a plan over the Triton versions `available` (the kernel sets of
/// the run, see resolve_tritons). Throws lp::UsageError when the product is too large.
Plan expand_plan(const SweepConfig& config, const std::vector<std::string>& available);

/// Keeps only the cases with these ids (sweep --case), in plan order, each with its
/// index, id and inputs as in the whole plan. Throws lp::UsageError naming the ids
/// the plan does not have.
void keep_only(Plan& plan, const std::vector<std::string>& ids);

/// A case's id: 12 hex digits of the sha256 of its canonical axes (not its
/// projection or tuned labels). What expand_plan gives every case.
std::string case_id(const Case& c);

/// Plan::not_applicable as JSON: [{"reason", "count"}] (the dry run's and the report's
/// meta.plan.not_applicable).
nlohmann::json not_applicable_json(const std::vector<Dropped>& not_applicable);

/// Plan::not_swept as JSON: [{"projection", "why"}] (the dry run's and the report's
/// meta.plan.not_swept).
nlohmann::json not_swept_json(const std::vector<NotSwept>& not_swept);

/// The case as JSON: {"index", "id", "axes"}.
nlohmann::json case_to_json(const Case& c);

/// The dry run's JSON: {"config", "count", "combinations", "not_applicable",
/// "excluded_by_rule", "duplicates", "not_swept" (when any), "cases"}, one case per
/// line, written as it goes.
void write_plan_json(std::FILE* file, const SweepConfig& config, const Plan& p);

}  // namespace lp::plan
