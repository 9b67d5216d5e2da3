#include "kernels/case_variants.hpp"

#include <algorithm>

namespace lp::kernels {

using nlohmann::json;

nlohmann::json wanted_expand_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.expand;
  const bool same_stride =
      std::adjacent_find(c.hidden.begin(), c.hidden.end(), std::not_equal_to<>()) == c.hidden.end();
  const plan::Dtype input = c.op == plan::Op::lora_linear ? plan::Dtype::fp32 : c.input_dtype;
  return {{"op", "expand"},
          {"input_dtype", plan::to_string(input)},
          {"weight_dtype", plan::to_string(c.weight_dtype)},
          {"block_m", k.block_m},
          {"block_n", k.block_n},
          {"block_k", k.block_k},
          {"num_warps", k.num_warps},
          {"num_stages", k.num_stages},
          {"even_k", k.even_k},
          {"add_inputs", c.add_inputs},
          {"num_slices", c.num_slices},
          {"same_stride", same_stride}};
}

nlohmann::json wanted_shrink_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.shrink;
  // shrink reads x in the weight dtype (lora_linear's x too).
  const std::string dtype(plan::to_string(c.weight_dtype));
  return {{"op", "shrink"},
          {"input_dtype", dtype},
          {"weight_dtype", dtype},
          {"block_m", k.block_m},
          {"block_n", k.block_n},
          {"block_k", k.block_k},
          {"num_warps", k.num_warps},
          {"num_stages", k.num_stages},
          {"even_k", k.even_k},
          {"split_k", k.split_k},
          {"num_slices", c.num_slices},
          {"group_size_m", k_shrink_group_size_m}};
}

}  // namespace lp::kernels
