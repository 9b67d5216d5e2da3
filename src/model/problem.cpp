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

bool dtype_in(DType t, std::initializer_list<DType> allowed) {
  return std::find(allowed.begin(), allowed.end(), t) != allowed.end();
}

}  // namespace

std::string_view op_name(Op op) noexcept {
  switch (op) {
    case Op::expand:
      return "expand";
    case Op::shrink:
      return "shrink";
    case Op::lora_linear:
      return "lora_linear";
    case Op::fused_moe:
      return "fused_moe";
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view name) noexcept {
  for (const Op op : {Op::expand, Op::shrink, Op::lora_linear, Op::fused_moe}) {
    if (name == op_name(op)) {
      return op;
    }
  }
  return std::nullopt;
}

std::int64_t Problem::hidden_total() const noexcept {
  return std::accumulate(slice_hidden.begin(), slice_hidden.end(), std::int64_t{0});
}

std::vector<std::int64_t> Problem::slice_offsets() const {
  std::vector<std::int64_t> offsets(slice_hidden.size(), 0);
  std::exclusive_scan(slice_hidden.begin(), slice_hidden.end(), offsets.begin(), std::int64_t{0});
  return offsets;
}

std::string Problem::describe() const {
  std::string text = fmt::format("{} T={} R={} H=[{}]", op_name(op), num_tokens, rank, fmt::join(slice_hidden, ","));
  if (op != Op::expand) {
    text += fmt::format(" H_in={}", hidden_in);
  }
  if (op == Op::lora_linear) {
    text += fmt::format(" L={} {}->fp32->{}", num_loras, dtype_name(input_dtype), dtype_name(weight_dtype));
  } else {
    text += fmt::format(" L={} {}->{}", num_loras, dtype_name(input_dtype), dtype_name(output_dtype()));
  }
  if (add_inputs) {
    text += " add_inputs";
  }
  if (op == Op::fused_moe) {
    text += fmt::format(" E={} top_k={}{} block_m={}", moe.num_experts, moe.top_k,
                        moe.mul_routed_weight ? " routed_weight" : "", moe.block_m);
  } else if (op != Op::expand) {
    text += fmt::format(" scale={} split_k={}", scale, split_k);
  }
  text += fmt::format(" seed={}", seed);
  return text;
}

void validate(const Problem& p) {
  const auto fail = [&](const std::string& why) { throw Error(fmt::format("invalid problem ({}): {}", op_name(p.op), why)); };
  if (p.num_tokens <= 0 || p.num_tokens > std::numeric_limits<std::int32_t>::max()) {
    fail(fmt::format("num_tokens {} is outside 1..{} (the index tensors are int32)", p.num_tokens,
                     std::numeric_limits<std::int32_t>::max()));
  }
  if (p.rank <= 0) {
    fail(fmt::format("rank {} is not positive", p.rank));
  }
  if (p.num_slices() < 1 || p.num_slices() > k_max_slices) {
    fail(fmt::format("{} slices; docs/problem.md allows 1 to {}", p.num_slices(), k_max_slices));
  }
  for (std::size_t s = 0; s < p.slice_hidden.size(); ++s) {
    if (p.slice_hidden[s] <= 0) {
      fail(fmt::format("slice_hidden[{}] = {} is not positive", s, p.slice_hidden[s]));
    }
  }
  if (p.num_loras < 1) {
    fail(fmt::format("num_loras {} is below 1", p.num_loras));
  }
  if (!dtype_in(p.weight_dtype, {DType::bf16, DType::f16})) {
    fail(fmt::format("weight dtype {} is not bf16 or fp16", dtype_name(p.weight_dtype)));
  }
  if (p.op == Op::expand) {
    if (!dtype_in(p.input_dtype, {DType::f32, DType::bf16, DType::f16})) {
      fail(fmt::format("input dtype {} is not fp32, bf16 or fp16", dtype_name(p.input_dtype)));
    }
    if (p.scale != 1.0f) {
      fail(fmt::format("scale {} given, but expand has no scale (shrink applies it)", p.scale));
    }
    if (p.split_k != 1) {
      fail(fmt::format("split_k {} given, but only shrink splits K", p.split_k));
    }
  } else {
    if (p.input_dtype != p.weight_dtype) {
      fail(fmt::format("x dtype {} differs from the weight dtype {}; docs/problem.md has X = W here",
                       dtype_name(p.input_dtype), dtype_name(p.weight_dtype)));
    }
    if (p.hidden_in <= 0) {
      fail(fmt::format("hidden_in {} is not positive", p.hidden_in));
    }
    if (p.split_k < 1) {
      fail(fmt::format("split_k {} is below 1", p.split_k));
    }
  }
  if (p.op == Op::fused_moe) {
    const ExpertRouting& m = p.moe;
    if (m.num_experts < 1 || m.top_k < 1 || m.top_k > m.num_experts) {
      fail(fmt::format("{} experts with top_k {}: need 1 <= top_k <= experts", m.num_experts, m.top_k));
    }
    if (m.block_m < 1) {
      fail(fmt::format("routing block_m {} is not positive", m.block_m));
    }
    if (p.num_tokens > std::numeric_limits<std::int32_t>::max() / m.top_k) {
      fail(fmt::format("{} tokens x top_k {} routed pairs do not fit the int32 index tensors", p.num_tokens, m.top_k));
    }
    if (p.scale != 1.0f || p.split_k != 1 || p.amplify_pairs != 0) {
      fail("scale, split_k and amplify_pairs are not fused_moe's (its kernel has neither)");
    }
    for (std::size_t s = 1; s < p.slice_hidden.size(); ++s) {
      if (p.slice_hidden[s] != p.slice_hidden[0]) {
        fail(fmt::format("slice_hidden[{}] = {} differs from slice_hidden[0] = {}: the fused-MoE slices are one "
                         "stacked weight each, of one width N",
                         s, p.slice_hidden[s], p.slice_hidden[0]));
      }
    }
  } else if (p.moe != ExpertRouting{}) {
    fail("experts and top_k given, but only fused_moe routes tokens to experts");
  }
  if (p.amplify_pairs < 0 || (p.op == Op::shrink && p.amplify_pairs != 0)) {
    fail(fmt::format("amplify_pairs {} given, but only an expand kernel is amplified, by 0 or more pairs",
                     p.amplify_pairs));
  }
  if (p.op == Op::shrink) {
    if (p.add_inputs) {
      fail("add_inputs given, but shrink writes buf, it does not add into y");
    }
    for (std::size_t s = 0; s < p.slice_hidden.size(); ++s) {
      if (p.slice_hidden[s] != p.hidden_in) {
        fail(fmt::format("slice_hidden[{}] = {} differs from hidden_in {}: every shrink slice reads the same x",
                         s, p.slice_hidden[s], p.hidden_in));
      }
    }
  }
  if (static_cast<std::int64_t>(p.lora_of.size()) != p.num_tokens) {
    fail(fmt::format("lora_of has {} entries for {} tokens", p.lora_of.size(), p.num_tokens));
  }
  for (std::size_t t = 0; t < p.lora_of.size(); ++t) {
    if (p.lora_of[t] < -1 || p.lora_of[t] >= p.num_loras) {
      fail(fmt::format("lora_of[{}] = {} is outside -1..{}", t, p.lora_of[t], p.num_loras - 1));
    }
  }
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
