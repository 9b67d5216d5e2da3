#pragma once
// The fused_moe family: vLLM's fused-MoE LoRA in one launch (docs/problem.md
// "Fused-MoE LoRA"): for each routed pair p = t * top_k + j, out[p, s*N + n] (+)=
// round_W(w_p * round_W(x A^T) B^T) with the pair's expert's A and B; x [T or
// T*top_k, K] W -> out [T*top_k, S*N] W. Its routing is routing.hpp.

#include "families/family.hpp"

namespace lp {

[[nodiscard]] const KernelFamily& fused_moe_family() noexcept;
/// The runtime arguments of vLLM's two-kernel fused-MoE path's kernel (the sets carry
/// it as fused_moe_shrink and fused_moe_expand; no family launches it yet).
[[nodiscard]] std::span<const std::string_view> two_kernel_arguments() noexcept;

}  // namespace lp
