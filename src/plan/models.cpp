#include "plan/models.hpp"

#include <algorithm>
#include <initializer_list>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

namespace lp::plan {

namespace {

const std::string k_file = "<embedded>/configs/models.json";

/// `j`, an object with only the keys in `known` (the schema's additionalProperties false).
void only_keys(const JsonIn& j, std::initializer_list<std::string_view> known) {
  for (const auto& [key, value] : j.members()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      value.fail(fmt::format("unknown key \"{}\" ({})", key, fmt::join(known, ", ")));
    }
  }
}

std::int64_t size(const JsonIn& j, std::string_view key) { return j.at(key).integer(1, std::int64_t{1} << 31); }

ModelPreset parse_preset(const JsonIn& m) {
  only_keys(m, {"name", "source", "hidden_size", "attention", "linear_attention", "mlp", "moe"});
  ModelPreset p;
  p.name = m.at("name").string();
  p.source = m.at("source").string();
  p.hidden_size = size(m, "hidden_size");
  const JsonIn a = m.at("attention");
  only_keys(a, {"num_attention_heads", "num_key_value_heads", "head_dim", "output_gate"});
  p.attention = {size(a, "num_attention_heads"), size(a, "num_key_value_heads"), size(a, "head_dim"),
                 a.find("output_gate") ? a.at("output_gate").boolean() : false};
  if (const auto l = m.find("linear_attention")) {
    only_keys(*l, {"num_key_heads", "num_value_heads", "key_head_dim", "value_head_dim"});
    p.linear_attention = LinearAttentionShape{size(*l, "num_key_heads"), size(*l, "num_value_heads"),
                                              size(*l, "key_head_dim"), size(*l, "value_head_dim")};
  }
  const auto mlp = m.find("mlp");
  const auto moe = m.find("moe");
  if (mlp.has_value() == moe.has_value()) {
    m.fail("expected exactly one of \"mlp\" and \"moe\"");
  }
  if (mlp) {
    only_keys(*mlp, {"intermediate_size"});
    p.intermediate_size = size(*mlp, "intermediate_size");
  } else {
    only_keys(*moe, {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "shared_expert_intermediate_size"});
    MoeShape e{size(*moe, "num_experts"), size(*moe, "num_experts_per_tok"), size(*moe, "moe_intermediate_size"), {}};
    if (moe->find("shared_expert_intermediate_size")) {
      e.shared_expert_intermediate_size = size(*moe, "shared_expert_intermediate_size");
    }
    if (e.num_experts_per_tok > e.num_experts) {
      moe->at("num_experts_per_tok").fail(fmt::format("more than num_experts ({})", e.num_experts));
    }
    p.moe = e;
  }
  return p;
}

std::vector<ModelPreset> parse_presets() {
  const nlohmann::json doc = parse_json_bounded(models_text(), k_file, 16);
  const JsonIn root(doc, k_file);
  std::vector<ModelPreset> out;
  for (const JsonIn& m : root.at("models").items()) {
    ModelPreset p = parse_preset(m);
    if (std::any_of(out.begin(), out.end(), [&](const ModelPreset& q) { return q.name == p.name; })) {
      m.at("name").fail(fmt::format("\"{}\" names two presets", p.name));
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::int64_t divided(std::int64_t size, std::int64_t tp, const ModelPreset& m, const char* what) {
  if (size % tp != 0) {
    throw UsageError(fmt::format("--model {} --tp {}: {} ({}) does not divide by {}", m.name, tp, what, size, tp));
  }
  return size / tp;
}

using Sizes = std::vector<std::int64_t>;

/// gate_up_proj and down_proj of a dense MLP of width `inter` (per rank), named under `prefix`.
void add_mlp(std::vector<Projection>& out, const std::string& layer, const std::string& prefix, std::int64_t hidden,
             std::int64_t inter) {
  out.push_back({prefix + "gate_up_proj", layer, LoraKernel::expand_shrink, {inter, inter}, hidden});
  out.push_back({prefix + "down_proj", layer, LoraKernel::expand_shrink, {hidden}, inter});
}

}  // namespace

std::string_view to_string(LoraKernel kernel) {
  return kernel == LoraKernel::fused_moe ? "fused_moe" : "expand_shrink";
}

const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = parse_presets();
  return presets;
}

const ModelPreset& find_model(std::string_view name) {
  std::vector<std::string_view> names;
  for (const ModelPreset& p : model_presets()) {
    if (p.name == name) {
      return p;
    }
    names.push_back(p.name);
  }
  throw UsageError(fmt::format("--model {}: no such preset (there are {}; loraprobe list --models)", name,
                               fmt::join(names, ", ")));
}

JsonText models_listing_json(std::int64_t tp) {
  nlohmann::json out = nlohmann::json::array();
  for (const ModelPreset& m : model_presets()) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const Projection& p : projections(m, tp)) {
      nlohmann::json shape = {{"projection", p.name},   {"layer", p.layer}, {"kernel", to_string(p.kernel)},
                              {"slices", p.out.size()}, {"n", p.out},       {"k", p.in}};
      if (p.kernel == LoraKernel::fused_moe) {
        shape["num_experts"] = p.num_experts;
        shape["top_k"] = p.top_k;
      }
      if (!p.source.empty()) {
        shape["source"] = p.source;
      }
      shape["swept"] = true;  // the routed experts as op fused_moe, planned with --op expand
      shapes.push_back(std::move(shape));
    }
    out.push_back({{"name", m.name}, {"source", m.source}, {"tp", tp}, {"moe", m.is_moe()}, {"projections", shapes}});
  }
  return JsonText::of(out);
}

std::vector<Projection> projections(const ModelPreset& m, std::int64_t tp) {
  if (tp < 1) {
    throw UsageError(fmt::format("--tp {}: at least 1", tp));
  }
  const std::int64_t hidden = m.hidden_size;
  std::vector<Projection> out;

  const AttentionShape& a = m.attention;
  const std::int64_t heads = divided(a.num_attention_heads, tp, m, "num_attention_heads");
  // vLLM replicates KV heads when there are fewer than ranks: one per rank.
  const std::int64_t kv_heads =
      a.num_key_value_heads >= tp ? divided(a.num_key_value_heads, tp, m, "num_key_value_heads") : 1;
  // With attn_output_gate vLLM's QKVParallelLinear gets twice the query heads: query and gate.
  const std::int64_t q_width = heads * a.head_dim * (a.output_gate ? 2 : 1);
  out.push_back({"qkv_proj", "attention", LoraKernel::expand_shrink,
                 {q_width, kv_heads * a.head_dim, kv_heads * a.head_dim}, hidden});
  out.push_back({"o_proj", "attention", LoraKernel::expand_shrink, {hidden}, heads * a.head_dim});

  if (m.linear_attention) {
    const LinearAttentionShape& l = *m.linear_attention;
    const std::int64_t k_heads = divided(l.num_key_heads, tp, m, "linear_num_key_heads");
    const std::int64_t v_heads = divided(l.num_value_heads, tp, m, "linear_num_value_heads");
    const std::int64_t key = k_heads * l.key_head_dim;
    const std::int64_t value = v_heads * l.value_head_dim;
    out.push_back({"in_proj_qkv", "linear_attention", LoraKernel::expand_shrink, {key, key, value}, hidden});
    out.push_back({"in_proj_z", "linear_attention", LoraKernel::expand_shrink, {value}, hidden});
    out.push_back({"in_proj_ba", "linear_attention", LoraKernel::expand_shrink, {v_heads, v_heads}, hidden});
    out.push_back({"out_proj", "linear_attention", LoraKernel::expand_shrink, {hidden}, value});
  }

  if (m.intermediate_size) {
    add_mlp(out, "mlp", "", hidden, divided(*m.intermediate_size, tp, m, "intermediate_size"));
  }
  if (m.moe) {
    const MoeShape& e = *m.moe;
    if (e.shared_expert_intermediate_size) {
      add_mlp(out, "shared_expert", "shared_expert.", hidden,
              divided(*e.shared_expert_intermediate_size, tp, m, "shared_expert_intermediate_size"));
    }
    // vLLM 0.34.0: qwen3_moe.py and qwen3_next.py build mlp.gate as GateLinear (a
    // ReplicatedLinear) and qwen3_next.py mlp.shared_expert_gate as ReplicatedLinear;
    // lora/layers/replicated_linear.py wraps every ReplicatedLinear.
    out.push_back({"gate", "router", LoraKernel::expand_shrink, {e.num_experts}, hidden, 0, 0,
                   "vllm/model_executor/models/qwen3_moe.py and qwen3_next.py at v0.34.0 (mlp.gate = "
                   "GateLinear(hidden_size, num_experts)); vllm/lora/layers/replicated_linear.py"});
    if (e.shared_expert_intermediate_size) {
      out.push_back({"shared_expert_gate", "shared_expert", LoraKernel::expand_shrink, {1}, hidden, 0, 0,
                     "vllm/model_executor/models/qwen3_next.py at v0.34.0 (mlp.shared_expert_gate = "
                     "ReplicatedLinear(hidden_size, 1)); vllm/lora/layers/replicated_linear.py"});
    }
    const std::int64_t inter = divided(e.moe_intermediate_size, tp, m, "moe_intermediate_size");
    out.push_back({"experts.gate_up_proj", "experts", LoraKernel::fused_moe, {inter, inter}, hidden, e.num_experts,
                   e.num_experts_per_tok});
    out.push_back({"experts.down_proj", "experts", LoraKernel::fused_moe, {hidden}, inter, e.num_experts,
                   e.num_experts_per_tok});
  }
  return out;
}

}  // namespace lp::plan
