#pragma once
// The routing a fused_moe problem hands its kernel, built on the host exactly as
// vLLM builds it (docs/problem.md "Fused-MoE LoRA"): each token's top_k distinct
// experts and routing weights, seeded; then, per adapter, what vLLM's
// moe_lora_align_block_size makes of them: the adapter's pairs sorted by expert,
// each expert's run padded to block_m with the sentinel num_valid = T * top_k, the
// expert of every block, and the padded length. The reference walks the same pairs
// by (adapter, expert) group (model/moe_routing.hpp holds the data). Pure host code.

#include <cstdint>
#include <vector>

#include "families/family.hpp"
#include "model/moe_routing.hpp"

namespace lp {

/// The routing of `problem` (op fused_moe, lora_of set): a function of problem.seed,
/// the same on every platform (SplitMix64, own bounded draws). Weights are uniform in
/// [1/16, 1] on a 2^-24 grid. Throws lp::Error for a problem validate() refuses or
/// another op.
[[nodiscard]] MoeRouting make_moe_routing(const Problem& problem);

}  // namespace lp
