#pragma once
// Model presets (configs/models.json): a model's LoRA-wrapped projections as the
// shapes loraprobe sweeps (--model NAME, --tp N), the way vLLM wraps them:
//   qkv_proj   expand into 3 slices: q (heads x head_dim), k and v (kv_heads x head_dim)
//   o_proj     expand into 1 slice of hidden_size; shrink from heads x head_dim
//   gate_up    expand into 2 slices of intermediate_size
//   down_proj  expand into 1 slice of hidden_size; shrink from intermediate_size
// Shrink reads the projection's input (hidden_size for qkv and gate_up). Tensor
// parallelism divides what vLLM shards: the column-parallel outputs (qkv, gate_up)
// and the row-parallel inputs (o_proj, down_proj); KV heads fewer than --tp are
// replicated, one per rank. For a mixture-of-experts model only the attention
// projections are swept: the experts' LoRA path (fused MoE LoRA) is not covered.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::plan {

struct ModelPreset {
  std::string name;
  std::string source;  ///< which model's config.json, which keys
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;
  std::int64_t head_dim = 0;
  bool moe = false;
};

/// One LoRA-wrapped projection, per tensor-parallel rank.
struct Projection {
  std::string name;                 ///< "qkv_proj", "o_proj", "gate_up_proj", "down_proj"
  std::vector<std::int64_t> out;    ///< expand: the width of each slice
  std::int64_t in = 0;              ///< shrink: the input's width (hidden for shrink)
};

/// The embedded presets, in file order. Throws lp::InputError on a malformed file
/// ("<embedded>/configs/models.json:<pointer>: ...").
const std::vector<ModelPreset>& model_presets();

/// The preset called `name`; lp::UsageError naming the presets there are otherwise.
const ModelPreset& find_model(std::string_view name);

/// The model's projections at tensor parallelism `tp`. Throws lp::UsageError when a
/// sharded size does not divide by `tp` (vLLM refuses such a model too).
std::vector<Projection> projections(const ModelPreset& model, std::int64_t tp);

/// The embedded file's text (generated from configs/models.json).
std::string_view models_text();

}  // namespace lp::plan
