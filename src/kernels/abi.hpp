#pragma once
// The argument lists of our Triton kernels (kernels/triton), in signature order,
// without constexprs. The manifest's params of every variant must be this list
// minus the arguments specialised to 1, plus Triton's two scratch pointers; the
// launcher fills arguments by these names (kernels/README.md "Runtime arguments").

#include <string_view>
#include <vector>

namespace lp::kernels {

/// Runtime arguments of _lora_expand_kernel (and of the expand-shaped test hooks).
const std::vector<std::string_view>& expand_arguments();
/// Runtime arguments of _lora_shrink_kernel.
const std::vector<std::string_view>& shrink_arguments();
/// Runtime arguments of _fused_moe_lora_one_shot_kernel (kernels/triton/fused_moe_lora.py).
const std::vector<std::string_view>& fused_moe_arguments();
/// Runtime arguments of _fused_moe_lora_kernel (the two-kernel path, launched as
/// fused_moe_shrink and fused_moe_expand), without a_desc and b_desc, which are None
/// and compiled in.
const std::vector<std::string_view>& sharded_moe_arguments();
/// The list for an op name ("expand", "shrink", "fused_moe", "fused_moe_shrink",
/// "fused_moe_expand"); empty for an unknown op.
const std::vector<std::string_view>& kernel_arguments(std::string_view op);

/// The two trailing .u64 parameters Triton 3.6 appends to every kernel.
inline constexpr std::string_view k_global_scratch = "global_scratch";
inline constexpr std::string_view k_profile_scratch = "profile_scratch";

}  // namespace lp::kernels
