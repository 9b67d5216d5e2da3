#include "families/fused_moe/routing.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "families/fused_moe/fused_moe.hpp"
#include "model/splitmix.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

// Keeps the routing's stream apart from the token mapping's and the inputs'.
constexpr std::uint64_t k_routing_stream = 0x6D6F652D726F7574ull;  // "moe-rout"

// Each token's top_k distinct experts and routing weights, and each pair's adapter.
void draw_routes(const Problem& problem, MoeRouting& r) {
  const std::int64_t tokens = problem.num_tokens;
  const std::int64_t top_k = problem.moe.top_k;
  const std::int64_t experts = problem.moe.num_experts;
  SplitMix64 rng(problem.seed ^ k_routing_stream);
  std::vector<std::int32_t> chosen;
  for (std::int64_t t = 0; t < tokens; ++t) {
    // top_k distinct experts: draw again on a repeat (top_k <= experts, and top_k is
    // small against experts in every model, so this ends quickly).
    chosen.clear();
    while (static_cast<std::int64_t>(chosen.size()) < top_k) {
      const auto e = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(experts)));
      if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) {
        chosen.push_back(e);
      }
    }
    for (std::int64_t j = 0; j < top_k; ++j) {
      const auto p = static_cast<std::size_t>(t * top_k + j);
      r.topk_ids[p] = chosen[static_cast<std::size_t>(j)];
      const auto u = static_cast<float>(rng.next() >> 40) * 5.9604644775390625e-08f;  // [0, 1) in 2^-24 steps
      r.topk_weights[p] = 0.0625f + 0.9375f * u;
      r.pair_lora[p] = problem.lora_of[static_cast<std::size_t>(t)];
    }
  }
}

}  // namespace

MoeRouting make_moe_routing(const Problem& problem) {
  if (&family_of(problem.op) != &fused_moe_family()) {
    throw Error(fmt::format("make_moe_routing: a {} problem has no routing", op_name(problem.op)));
  }
  validate(problem);
  const ExpertRouting& shape = problem.moe;
  const std::int64_t tokens = problem.num_tokens;
  const std::int64_t top_k = shape.top_k;
  const std::int64_t experts = shape.num_experts;
  const std::int64_t block = shape.block_m;
  const std::int64_t pairs = tokens * top_k;
  MoeRouting r;
  r.topk_ids.resize(static_cast<std::size_t>(pairs));
  r.topk_weights.resize(static_cast<std::size_t>(pairs));
  r.pair_lora.resize(static_cast<std::size_t>(pairs));
  draw_routes(problem, r);

  const std::int64_t loras = problem.num_loras;
  // vLLM's max_num_tokens_padded: room for every pair plus block - 1 padding per
  // expert, or one block per pair when there are fewer pairs than experts.
  const std::int64_t worst = pairs < experts ? pairs * block : pairs + experts * (block - 1);
  r.padded_pairs = (worst + block - 1) / block * block;
  const auto sentinel = static_cast<std::int32_t>(pairs);
  r.sorted_token_ids.assign(static_cast<std::size_t>(loras * r.padded_pairs), sentinel);
  r.expert_ids.assign(static_cast<std::size_t>(loras * (r.padded_pairs / block)), -1);
  r.num_tokens_post_padded.assign(static_cast<std::size_t>(loras), 0);

  // Bucket the live pairs by (adapter, expert), keeping pair order inside a bucket.
  std::vector<std::int64_t> count(static_cast<std::size_t>(loras * experts), 0);
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::int32_t lora = r.pair_lora[static_cast<std::size_t>(p)];
    if (lora >= 0) {
      ++count[static_cast<std::size_t>(lora * experts + r.topk_ids[static_cast<std::size_t>(p)])];
    }
  }
  std::vector<std::int64_t> start(count.size(), 0);
  std::int64_t at = 0;
  for (std::size_t g = 0; g < count.size(); ++g) {
    start[g] = at;
    if (count[g] > 0) {
      r.groups.push_back({static_cast<std::int32_t>(static_cast<std::int64_t>(g) / experts),
                          static_cast<std::int32_t>(static_cast<std::int64_t>(g) % experts), at, count[g]});
    }
    at += count[g];
  }
  r.group_pairs.resize(static_cast<std::size_t>(at));
  std::vector<std::int64_t> fill = start;
  for (std::int64_t p = 0; p < pairs; ++p) {
    const std::int32_t lora = r.pair_lora[static_cast<std::size_t>(p)];
    if (lora >= 0) {
      const auto g = static_cast<std::size_t>(lora * experts + r.topk_ids[static_cast<std::size_t>(p)]);
      r.group_pairs[static_cast<std::size_t>(fill[g]++)] = static_cast<std::int32_t>(p);
    }
  }

  // moe_lora_align_block_size: per adapter, its groups in expert order, each padded.
  for (const MoeRouting::Group& g : r.groups) {
    std::int32_t& used = r.num_tokens_post_padded[static_cast<std::size_t>(g.lora)];
    std::int32_t* row = r.sorted_token_ids.data() + g.lora * r.padded_pairs;
    std::copy_n(r.group_pairs.begin() + g.begin, g.count, row + used);
    const std::int64_t blocks = (g.count + block - 1) / block;
    std::int32_t* experts_row = r.expert_ids.data() + g.lora * (r.padded_pairs / block);
    std::fill_n(experts_row + used / block, blocks, g.expert);
    used = static_cast<std::int32_t>(used + blocks * block);
  }
  return r;
}

}  // namespace lp
