#pragma once
// What a fused_moe problem hands its kernel (docs/problem.md "Fused-MoE LoRA"): each
// token's top_k experts and routing weights, and per adapter what vLLM's
// moe_lora_align_block_size makes of them. The data only: the fused_moe family builds
// it (families/fused_moe/routing.hpp), a case's buffers hold it.

#include <cstdint>
#include <vector>

namespace lp {

struct MoeRouting {
  /// Pair p = t * top_k + j: token t's j-th expert and its routing weight.
  std::vector<std::int32_t> topk_ids;
  std::vector<float> topk_weights;
  /// EM: each adapter's row of sorted_token_ids, vLLM's max_num_tokens_padded (every
  /// pair plus block_m - 1 padding per expert, or block_m per pair when there are
  /// fewer pairs than experts) rounded up to a multiple of block_m.
  std::int64_t padded_pairs = 0;
  std::vector<std::int32_t> sorted_token_ids;        ///< [L, EM]: pair ids, padding = T * top_k
  std::vector<std::int32_t> expert_ids;              ///< [L, EM / block_m]: -1 past the adapter's blocks
  std::vector<std::int32_t> num_tokens_post_padded;  ///< [L]: the adapter's padded pair count
  std::vector<std::int32_t> pair_lora;               ///< [T * top_k]: lora_of of the pair's token
  /// A run of pairs of one adapter routed to one expert, in group_pairs.
  struct Group {
    std::int32_t lora = 0;
    std::int32_t expert = 0;
    std::int64_t begin = 0;
    std::int64_t count = 0;
  };
  std::vector<Group> groups;               ///< adapter ascending, then expert ascending; no empty group
  std::vector<std::int32_t> group_pairs;   ///< every pair of a token with a LoRA, in group order

  /// Pairs whose token has a LoRA.
  [[nodiscard]] std::int64_t live_pairs() const noexcept { return static_cast<std::int64_t>(group_pairs.size()); }
};

}  // namespace lp
