#pragma once
// Model presets (configs/models.json): a model's LoRA-wrapped projections as the
// shapes loraprobe sweeps (--model NAME, --tp N), the way vLLM builds and wraps them.
//
// Full attention (every model):
//   qkv_proj   expand into 3 slices: q (heads x head_dim, twice that with an output
//              gate), k and v (kv_heads x head_dim); shrink from hidden_size
//   o_proj     expand into 1 slice of hidden_size; shrink from heads x head_dim
// Gated delta-net linear attention (Qwen3.5/3.6; vLLM's GatedDeltaNetAttention with
// LoRA, which keeps in_proj_qkv and in_proj_z apart instead of fusing in_proj_qkvz):
//   in_proj_qkv  3 unequal slices: key, key, value (heads x head_dim each)
//   in_proj_z    1 slice of value;  in_proj_ba  2 slices of value heads (b and a)
//   out_proj     expand into hidden_size; shrink from value
// Dense MLP, and a MoE model's shared expert (shared_expert.*):
//   gate_up_proj expand into 2 slices of intermediate_size; down_proj back to hidden
// MoE routing (a MoE model): vLLM wraps every ReplicatedLinear with LoRA, the router
//   (gate: GateLinear, hidden -> num_experts) and a shared expert's gate
//   (shared_expert_gate: hidden -> 1); both replicated, never sharded.
// Routed experts (experts.*): vLLM's fused-MoE LoRA kernels, gate_up (w13) and down
//   (w2) over each token's top-k experts. A plan sweeps them as op fused_moe (vLLM's
//   one-launch fast path) when its op axis has expand, and lists them as not swept
//   (Plan::not_swept) otherwise, never leaving them out silently.
//
// Tensor parallelism divides what vLLM shards: column-parallel outputs (qkv, z, ba,
// gate_up, the experts' intermediate) and row-parallel inputs (o_proj, out_proj,
// down_proj); KV heads fewer than --tp are replicated, one per rank.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json_text.hpp"

namespace lp::plan {

struct AttentionShape {
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;
  std::int64_t head_dim = 0;
  bool output_gate = false;  ///< attn_output_gate: the query slice also carries the gate
};

/// Gated delta-net layers (config.json linear_num_key_heads, ...).
struct LinearAttentionShape {
  std::int64_t num_key_heads = 0;
  std::int64_t num_value_heads = 0;
  std::int64_t key_head_dim = 0;
  std::int64_t value_head_dim = 0;
};

struct MoeShape {
  std::int64_t num_experts = 0;
  std::int64_t num_experts_per_tok = 0;
  std::int64_t moe_intermediate_size = 0;
  std::optional<std::int64_t> shared_expert_intermediate_size;  ///< when the model has a shared expert
};

struct ModelPreset {
  std::string name;
  std::string source;  ///< which model's config.json, which keys
  std::int64_t hidden_size = 0;
  AttentionShape attention;
  std::optional<LinearAttentionShape> linear_attention;
  std::optional<std::int64_t> intermediate_size;  ///< a dense MLP's; nullopt for a MoE model
  std::optional<MoeShape> moe;

  [[nodiscard]] bool is_moe() const noexcept { return moe.has_value(); }
};

/// Which kernels vLLM runs for a projection's LoRA.
enum class LoraKernel {
  expand_shrink,  ///< lora_shrink then lora_expand (what loraprobe sweeps)
  fused_moe,      ///< the fused-MoE LoRA kernel over the routed experts (op fused_moe, planned with expand)
};

std::string_view to_string(LoraKernel kernel);

/// One LoRA-wrapped projection, per tensor-parallel rank.
struct Projection {
  std::string name;                 ///< vLLM's module name: "qkv_proj", "in_proj_ba", "shared_expert.down_proj", ...
  std::string layer;                ///< "attention", "linear_attention", "mlp", "shared_expert", "experts"
  LoraKernel kernel = LoraKernel::expand_shrink;
  std::vector<std::int64_t> out;    ///< expand: the width of each slice (N)
  std::int64_t in = 0;              ///< shrink: the input's width (K)
  std::int64_t num_experts = 0;     ///< fused_moe: experts, and each token's top_k
  std::int64_t top_k = 0;
  std::string source{};             ///< where vLLM wraps it with LoRA, when that is worth naming
};

/// The embedded presets, in file order. Throws lp::InputError on a malformed file
/// ("<embedded>/configs/models.json:<pointer>: ...").
const std::vector<ModelPreset>& model_presets();

/// The preset called `name`; lp::UsageError naming the presets there are otherwise.
const ModelPreset& find_model(std::string_view name);

/// The model's projections at tensor parallelism `tp`. Throws lp::UsageError when a
/// sharded size does not divide by `tp` (vLLM refuses such a model too).
std::vector<Projection> projections(const ModelPreset& model, std::int64_t tp);

/// `list --models --json`: each preset with its source and its projections at `tp`
/// (projection, layer, kernel, slices, n, k, swept; fused_moe: num_experts and top_k).
JsonText models_listing_json(std::int64_t tp);

/// The embedded file's text (generated from configs/models.json).
std::string_view models_text();

}  // namespace lp::plan
