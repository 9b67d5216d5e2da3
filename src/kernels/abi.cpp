#include "kernels/abi.hpp"

namespace lp::kernels {

const std::vector<std::string_view>& expand_arguments() {
  static const std::vector<std::string_view> args = {
      "input_ptr",       "lora_ptr",        "out_ptr",         "M",
      "N",               "K",               "token_indices_sorted_by_lora_ids",
      "num_tokens_per_lora",                "lora_token_start_loc",
      "lora_ids",        "slice_start_loc", "input_d0_stride", "input_d1_stride",
      "input_d2_stride", "ls_d0_ptr",       "ls_d1_ptr",       "ls_d2_ptr",
      "output_d0_stride", "output_d1_stride", "output_hs_ptr"};
  return args;
}

const std::vector<std::string_view>& shrink_arguments() {
  static const std::vector<std::string_view> args = {
      "input_ptr",       "lora_ptr",        "out_ptr",        "M",
      "N",               "K",               "token_indices_sorted_by_lora_ids",
      "num_tokens_per_lora",                "lora_token_start_loc",
      "lora_ids",        "scaling",         "input_d0_stride", "input_d1_stride",
      "lora_d0_stride",  "lora_d1_stride",  "lora_d2_stride", "output_d0_stride",
      "output_d1_stride", "output_d2_stride"};
  return args;
}

const std::vector<std::string_view>& fused_moe_arguments() {
  static const std::vector<std::string_view> args = {
      "x_ptr",          "A_ptrs",          "B_ptrs",           "out_ptr",
      "topk_weights_ptr", "sorted_token_ids_ptr", "expert_ids_ptr", "num_tokens_post_padded_ptr",
      "token_lora_mapping_ptr", "lora_ids_ptr", "adapter_enabled_ptr", "N",
      "K",              "num_valid_tokens", "top_k_num",        "max_loras",
      "stride_xm",      "stride_xk",       "stride_A_lora",    "stride_A_expert",
      "stride_A_r",     "stride_A_k",      "stride_B_lora",    "stride_B_expert",
      "stride_B_n",     "stride_B_r",      "stride_om",        "stride_on",
      "stride_tl_",     "stride_el",       "slice_n_offset"};
  return args;
}

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

const std::vector<std::string_view>& kernel_arguments(std::string_view op) {
  static const std::vector<std::string_view> none;
  if (op == "expand") {
    return expand_arguments();
  }
  if (op == "shrink") {
    return shrink_arguments();
  }
  if (op == "fused_moe") {
    return fused_moe_arguments();
  }
  if (op == "fused_moe_shrink" || op == "fused_moe_expand") {
    return sharded_moe_arguments();
  }
  return none;
}

}  // namespace lp::kernels
