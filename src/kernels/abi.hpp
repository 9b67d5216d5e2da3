#pragma once
// The argument lists of our Triton kernels (kernels/triton), in signature order
// (each family's own in src/families/, the two-kernel fused-MoE path's here),
// without constexprs. The manifest's params of every variant must be this list
// minus the arguments specialised to 1, plus Triton's two scratch pointers; the
// launcher fills arguments by these names (kernels/README.md "Runtime arguments").

#include <span>
#include <string_view>
#include <vector>

namespace lp::kernels {

/// Runtime arguments of _fused_moe_lora_kernel (the two-kernel path, launched as
/// fused_moe_shrink and fused_moe_expand), without a_desc and b_desc, which are None
/// and compiled in.
const std::vector<std::string_view>& sharded_moe_arguments();
/// The list for a variant's op: a one-kernel family's own (families/*:
/// KernelFamily::kernel_arguments), or the two-kernel fused-MoE path's
/// ("fused_moe_shrink", "fused_moe_expand"); empty for an unknown op.
std::span<const std::string_view> kernel_arguments(std::string_view op);

/// The two trailing .u64 parameters Triton 3.6 appends to every kernel.
inline constexpr std::string_view k_global_scratch = "global_scratch";
inline constexpr std::string_view k_profile_scratch = "profile_scratch";

}  // namespace lp::kernels
