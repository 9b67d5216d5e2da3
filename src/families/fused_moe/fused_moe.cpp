#include "families/fused_moe/fused_moe.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "families/fused_moe/routing.hpp"
#include "families/rules.hpp"

namespace lp {
namespace {

using namespace family_rules;

class FusedMoe final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::fused_moe; }
  [[nodiscard]] std::string_view name() const noexcept override { return "fused_moe"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override {
    p.input_dtype = p.weight_dtype;
    p.scale = 1.0F;
  }

  void check(const Problem& p, const Fail& fail) const override {
    check_reads_x(p, fail);
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
    if (p.scale != 1.0f || p.split_k != 1 || p.amplify != 0) {
      fail("scale, split_k and amplify are not fused_moe's (its kernel has neither)");
    }
    for (std::size_t s = 1; s < p.slice_hidden.size(); ++s) {
      if (p.slice_hidden[s] != p.slice_hidden[0]) {
        fail(fmt::format("slice_hidden[{}] = {} differs from slice_hidden[0] = {}: the fused-MoE slices are one "
                         "stacked weight each, of one width N",
                         s, p.slice_hidden[s], p.slice_hidden[0]));
      }
    }
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return fmt::format(" H_in={} L={} {}->{}{} E={} top_k={}{} block_m={}", p.hidden_in, p.num_loras,
                       dtype_name(p.input_dtype), dtype_name(p.weight_dtype), p.add_inputs ? " add_inputs" : "",
                       p.moe.num_experts, p.moe.top_k, p.moe.mul_routed_weight ? " routed_weight" : "",
                       p.moe.block_m);
  }
  [[nodiscard]] std::int64_t output_rows(const Problem& p) const noexcept override {
    return p.num_tokens * p.moe.top_k;
  }
  [[nodiscard]] std::int64_t x_rows(const Problem& p) const noexcept override {
    return p.moe.mul_routed_weight ? output_rows(p) : p.num_tokens;
  }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    // Its rank tile is lora_linear's buf, cast to W before its expand; its routing
    // weights, in [1/16, 1], only scale the result down, so the lora_linear terms bound it.
    return w_output_tolerance(WOutputShape{p.weight_dtype, p.rank, p.amplify, p.add_inputs, p.hidden_in,
                                           std::abs(static_cast<double>(p.scale))});
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting* given) const override {
    // x rows of live pairs' tokens (or pairs), A and B of the (adapter, expert) groups
    // in use, the live pairs' output rows written (and read back with ADD_INPUTS).
    const MoeRouting built = given != nullptr ? MoeRouting{} : make_moe_routing(p);
    const MoeRouting& routing = given != nullptr ? *given : built;
    const auto live = static_cast<std::uint64_t>(m.live_tokens());
    const auto slices = static_cast<std::uint64_t>(p.num_slices());
    const auto rank = static_cast<std::uint64_t>(p.rank);
    const auto h_tot = static_cast<std::uint64_t>(p.hidden_total());
    const std::uint64_t w = dtype_size(p.weight_dtype);
    const auto pairs = static_cast<std::uint64_t>(routing.live_pairs());
    const auto groups = static_cast<std::uint64_t>(routing.groups.size());
    const auto k = static_cast<std::uint64_t>(p.hidden_in);
    const std::uint64_t x_rows = p.moe.mul_routed_weight ? pairs : live;
    return x_rows * k * w + slices * groups * rank * (k + h_tot / slices) * w +
           pairs * h_tot * w * (p.add_inputs ? 2 : 1);
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const std::uint64_t T = u(p.num_tokens);
    const std::uint64_t R = u(p.rank);
    const std::uint64_t S = static_cast<std::uint64_t>(p.num_slices());
    const std::uint64_t L = u(p.num_loras);
    const std::uint64_t w = dtype_size(p.weight_dtype);
    const std::uint64_t h_tot = hidden_total(p);
    const std::uint64_t h_in = u(p.hidden_in);
    const std::uint64_t E = u(p.moe.num_experts);
    const std::uint64_t P = mul({T, u(p.moe.top_k)});
    const std::uint64_t padded = sum({P, mul({E, u(p.moe.block_m)})});
    return with_reference_scratch(
        sum({mul({u(x_rows(p)), h_in, w}), mul({S, L, E, R, h_in, w}),
             mul({S, L, E, h_tot / std::max<std::uint64_t>(S, 1), R, w}), mul({3, P, h_tot, w}),
             mul({L, padded, 8}), mul({P, 12})}));  // x, A, B, y/y_in/reference, routing
  }

  [[nodiscard]] std::span<const std::string_view> kernel_arguments() const noexcept override { return k_arguments; }

 private:
  // _fused_moe_lora_one_shot_kernel's runtime arguments (kernels/triton), in signature order.
  static constexpr std::array<std::string_view, 31> k_arguments = {
      "x_ptr",          "A_ptrs",          "B_ptrs",           "out_ptr",
      "topk_weights_ptr", "sorted_token_ids_ptr", "expert_ids_ptr", "num_tokens_post_padded_ptr",
      "token_lora_mapping_ptr", "lora_ids_ptr", "adapter_enabled_ptr", "N",
      "K",              "num_valid_tokens", "top_k_num",        "max_loras",
      "stride_xm",      "stride_xk",       "stride_A_lora",    "stride_A_expert",
      "stride_A_r",     "stride_A_k",      "stride_B_lora",    "stride_B_expert",
      "stride_B_n",     "stride_B_r",      "stride_om",        "stride_on",
      "stride_tl_",     "stride_el",       "slice_n_offset"};
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "fused_moe cases come from a MoE model: --model qwen3.6-35b-a3b (or another preset with a moe block; loraprobe list --models) plans the routed experts' fused-MoE kernel with the expand op",
                                         .input_dtype_axis = false,
                                         .input_is_weight_dtype = true,
                                         .add_inputs_axis = true,
                                         .gdc_axis = false,
                                         .shrink_knobs = false,
                                         .expand_knobs = true,
                                         .one_hidden_why = "",
                                         .register_a_remedies = false,
                                         .fixed_input_dtype = std::nullopt,
                                         .fixed_weight_dtype = std::nullopt,
                                         .scale_group_axis = false};
  // Its one kernel travels in the expand slot: it is the kernel that writes y.
  static constexpr std::array<KernelLaunch, 1> k_kernels{{{Op::fused_moe, ImageSlot::expand}}};
};

}  // namespace

std::span<const std::string_view> two_kernel_arguments() noexcept {
  // _fused_moe_lora_kernel's runtime arguments (the two-kernel path, launched as
  // fused_moe_shrink and fused_moe_expand), without a_desc and b_desc, which are None
  // and compiled in.
  static constexpr std::array<std::string_view, 29> k_arguments = {

      "a_ptr",        "b_ptr",           "c_ptr",          "topk_weights_ptr", "sorted_token_ids_ptr",
      "expert_ids_ptr", "num_tokens_post_padded_ptr", "token_lora_mapping_ptr", "N", "K",
      "EM",           "num_valid_tokens", "num_experts",    "top_k_num",        "lora_ids",
      "adapter_enabled", "max_loras",    "stride_am",      "stride_ak",        "stride_bl",
      "stride_be",    "stride_bk",       "stride_bn",      "stride_cm",        "stride_cn",
      "stride_tl",    "stride_el",       "slice_a_size",   "slice_c_size"};
  return k_arguments;
}

const KernelFamily& fused_moe_family() noexcept {
  static const FusedMoe family;
  return family;
}

}  // namespace lp
