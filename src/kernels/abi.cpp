#include "kernels/abi.hpp"

#include "families/family.hpp"

namespace lp::kernels {

const std::vector<std::string_view>& sharded_moe_arguments() {
  static const std::vector<std::string_view> args = {
      "a_ptr",        "b_ptr",           "c_ptr",          "topk_weights_ptr", "sorted_token_ids_ptr",
      "expert_ids_ptr", "num_tokens_post_padded_ptr", "token_lora_mapping_ptr", "N", "K",
      "EM",           "num_valid_tokens", "num_experts",    "top_k_num",        "lora_ids",
      "adapter_enabled", "max_loras",    "stride_am",      "stride_ak",        "stride_bl",
      "stride_be",    "stride_bk",       "stride_bn",      "stride_cm",        "stride_cn",
      "stride_tl",    "stride_el",       "slice_a_size",   "slice_c_size"};
  return args;
}

std::span<const std::string_view> kernel_arguments(std::string_view op) {
  if (const KernelFamily* family = family_named(op)) {
    return family->kernel_arguments();
  }
  if (op == "fused_moe_shrink" || op == "fused_moe_expand") {
    return sharded_moe_arguments();
  }
  return {};
}

}  // namespace lp::kernels
