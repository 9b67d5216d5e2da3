#include "model/problem.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/splitmix.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

// Keeps the mapping's stream apart from anything else seeded with the same seed.
constexpr std::uint64_t k_mapping_stream = 0x6C6F72612D6D6170ull;  // "lora-map"

}  // namespace

std::int64_t Problem::hidden_total() const noexcept {
  return std::accumulate(slice_hidden.begin(), slice_hidden.end(), std::int64_t{0});
}

std::vector<std::int64_t> Problem::slice_offsets() const {
  std::vector<std::int64_t> offsets(slice_hidden.size(), 0);
  std::exclusive_scan(slice_hidden.begin(), slice_hidden.end(), offsets.begin(), std::int64_t{0});
  return offsets;
}

std::string inputs_key(const Problem& p) {
  return fmt::format("op={} T={} R={} H=[{}] H_in={} L={} in={} w={} add={} scale={} group={} moe={},{},{},{}",
                     static_cast<int>(p.op), p.num_tokens, p.rank, fmt::join(p.slice_hidden, ","), p.hidden_in,
                     p.num_loras, dtype_name(p.input_dtype), dtype_name(p.weight_dtype), p.add_inputs, p.scale,
                     p.scale_group, p.moe.num_experts, p.moe.top_k, p.moe.mul_routed_weight, p.moe.block_m);
}

std::int64_t LoraMetadata::live_tokens() const noexcept {
  std::int64_t live = 0;
  for (std::size_t j = 0; j < lora_ids.size(); ++j) {
    if (lora_ids[j] >= 0) {
      live += num_tokens_per_lora[j];
    }
  }
  return live;
}

std::int64_t LoraMetadata::used_loras() const noexcept {
  return std::count_if(lora_ids.begin(), lora_ids.end(), [](std::int32_t id) { return id >= 0; });
}

LoraMetadata build_lora_metadata(std::span<const std::int32_t> lora_of, std::int32_t num_loras) {
  if (lora_of.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw Error(fmt::format("{} tokens do not fit the int32 index tensors", lora_of.size()));
  }
  // Counts indexed by lora + 1, so -1 lands in bucket 0 and the ascending order
  // of docs/problem.md is bucket order.
  std::vector<std::int32_t> count(static_cast<std::size_t>(num_loras) + 1, 0);
  for (std::size_t t = 0; t < lora_of.size(); ++t) {
    const std::int32_t id = lora_of[t];
    if (id < -1 || id >= num_loras) {
      throw Error(fmt::format("lora_of[{}] = {} is outside -1..{}", t, id, num_loras - 1));
    }
    ++count[static_cast<std::size_t>(id + 1)];
  }
  LoraMetadata m;
  m.lora_token_start_loc.push_back(0);
  for (std::size_t bucket = 0; bucket < count.size(); ++bucket) {
    if (count[bucket] > 0) {
      m.lora_ids.push_back(static_cast<std::int32_t>(bucket) - 1);
      m.num_tokens_per_lora.push_back(count[bucket]);
      m.lora_token_start_loc.push_back(m.lora_token_start_loc.back() + count[bucket]);
    }
  }
  // Stable counting sort: the tokens of each LoRA keep their original order.
  std::vector<std::int32_t> next(count.size(), 0);
  std::exclusive_scan(count.begin(), count.end(), next.begin(), 0);
  m.token_indices_sorted_by_lora_ids.assign(lora_of.size(), 0);
  for (std::size_t t = 0; t < lora_of.size(); ++t) {
    const auto bucket = static_cast<std::size_t>(lora_of[t] + 1);
    m.token_indices_sorted_by_lora_ids[static_cast<std::size_t>(next[bucket]++)] = static_cast<std::int32_t>(t);
  }
  return m;
}

std::vector<std::int32_t> make_token_mapping(std::int64_t num_tokens, std::int32_t num_loras, std::uint64_t seed) {
  if (num_tokens < 0 || num_tokens > std::numeric_limits<std::int32_t>::max()) {
    throw Error(fmt::format("make_token_mapping: {} tokens is outside 0..INT32_MAX", num_tokens));
  }
  if (num_loras < 1) {
    throw Error(fmt::format("make_token_mapping: num_loras {} is below 1", num_loras));
  }
  std::vector<std::int32_t> mapping(static_cast<std::size_t>(num_tokens), 0);
  if (num_loras == 1) {
    return mapping;
  }
  const std::int64_t choices = std::int64_t{num_loras} + 1;  // -1 and 0..L-1
  for (std::int64_t t = 0; t < num_tokens; ++t) {
    mapping[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(t % choices) - 1;
  }
  SplitMix64 rng(seed ^ k_mapping_stream);
  for (std::size_t i = mapping.size(); i > 1; --i) {
    const std::size_t j = static_cast<std::size_t>(rng.below(i));
    std::swap(mapping[i - 1], mapping[j]);
  }
  return mapping;
}

}  // namespace lp
