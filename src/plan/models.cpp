#include "plan/models.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/json_bounded.hpp"

namespace lp::plan {

namespace {

constexpr const char* k_file = "<embedded>/configs/models.json";

std::vector<ModelPreset> parse_presets() {
  const nlohmann::json doc = parse_json_bounded(models_text(), k_file, 16);
  std::vector<ModelPreset> out;
  const nlohmann::json& models = doc.at("models");
  for (std::size_t i = 0; i < models.size(); ++i) {
    const nlohmann::json& m = models[i];
    auto positive = [&](const char* key) {
      if (!m.contains(key) || !m[key].is_number_integer() || m[key].get<std::int64_t>() < 1) {
        throw InputError(k_file, fmt::format("/models/{}/{}", i, key), "missing or not a positive integer");
      }
      return m[key].get<std::int64_t>();
    };
    ModelPreset p;
    p.name = m.at("name").get<std::string>();
    p.source = m.at("source").get<std::string>();
    p.hidden_size = positive("hidden_size");
    p.intermediate_size = positive("intermediate_size");
    p.num_attention_heads = positive("num_attention_heads");
    p.num_key_value_heads = positive("num_key_value_heads");
    p.head_dim = positive("head_dim");
    p.moe = m.at("moe").get<bool>();
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

}  // namespace

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

std::vector<Projection> projections(const ModelPreset& m, std::int64_t tp) {
  if (tp < 1) {
    throw UsageError(fmt::format("--tp {}: at least 1", tp));
  }
  const std::int64_t heads = divided(m.num_attention_heads, tp, m, "num_attention_heads");
  // vLLM replicates KV heads when there are fewer than ranks: one per rank.
  const std::int64_t kv_heads = m.num_key_value_heads >= tp
                                    ? divided(m.num_key_value_heads, tp, m, "num_key_value_heads")
                                    : 1;
  std::vector<Projection> out;
  out.push_back({"qkv_proj", {heads * m.head_dim, kv_heads * m.head_dim, kv_heads * m.head_dim}, m.hidden_size});
  out.push_back({"o_proj", {m.hidden_size}, heads * m.head_dim});
  if (!m.moe) {
    const std::int64_t inter = divided(m.intermediate_size, tp, m, "intermediate_size");
    out.push_back({"gate_up_proj", {inter, inter}, m.hidden_size});
    out.push_back({"down_proj", {m.hidden_size}, inter});
  }
  return out;
}

}  // namespace lp::plan
