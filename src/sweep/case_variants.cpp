#include "sweep/case_variants.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/vllm_defaults.hpp"

namespace lp::sweep {

using nlohmann::json;

namespace {

/// The manifest axes of a kernel's tile and pipeline, the same for every op.
nlohmann::json tile_axes(std::string_view op, DType input, DType weight, const plan::KernelKnobs& k) {
  return {{"op", op},
          {"input_dtype", dtype_name(input)},
          {"weight_dtype", dtype_name(weight)},
          {"block_m", k.block_m},
          {"block_n", k.block_n},
          {"block_k", k.block_k},
          {"num_warps", k.num_warps},
          {"num_stages", k.num_stages},
          {"even_k", k.even_k}};
}

}  // namespace

nlohmann::json wanted_expand_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.expand;
  if (const plan::FusedMoeCase* fused = c.fused_moe()) {
    const plan::FusedMoeCase& f = *fused;
    nlohmann::json wanted = tile_axes("fused_moe", c.weight_dtype, c.weight_dtype, k);
    wanted.update({{"add_inputs", c.add_inputs},
                   {"rank", c.rank},
                   {"top_k", f.mul_routed_weight ? 1 : f.top_k},
                   {"mul_routed_weight", f.mul_routed_weight},
                   {"npid_factor", f.npid_factor}});
    return wanted;
  }
  const bool same_stride =
      std::adjacent_find(c.hidden.begin(), c.hidden.end(), std::not_equal_to<>()) == c.hidden.end();
  const DType input = c.op == Op::lora_linear ? DType::f32 : c.input_dtype;
  nlohmann::json wanted = tile_axes("expand", input, c.weight_dtype, k);
  wanted.update({{"add_inputs", c.add_inputs},
                 {"num_slices", c.num_slices},
                 {"same_stride", same_stride},
                 {"gdc", c.gdc}});
  if (k.num_ctas != 1) {
    wanted["num_ctas"] = k.num_ctas;  // a tuned file's: no embedded variant has it, and the lookup says so
  }
  return wanted;
}

nlohmann::json wanted_shrink_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.shrink;
  // shrink reads x in the weight dtype (lora_linear's x too).
  nlohmann::json wanted = tile_axes("shrink", c.weight_dtype, c.weight_dtype, k);
  wanted.update({{"split_k", k.split_k},
                 {"num_slices", c.num_slices},
                 {"group_size_m", k.group_size_m},
                 {"gdc", c.gdc},
                 {"tail_ns", c.gdc ? k_chain_tail_ns : 0}});
  if (k.num_ctas != 1) {
    wanted["num_ctas"] = k.num_ctas;
  }
  return wanted;
}

PlannedVariants planned_variants(const plan::Plan& plan, const kernels::KernelSets& sets) {
  PlannedVariants out;
  std::set<compile::Compiler> compilers;
  std::set<std::pair<std::string, std::string>> seen;
  for (const plan::Case& c : plan.cases) {
    compilers.insert(c.compiler);
    const kernels::KernelSet& set = sets.at(c.triton);
    std::vector<nlohmann::json> wanted;
    if (c.shrink) {
      wanted.push_back(wanted_shrink_axes(c));
    }
    if (c.expand) {
      wanted.push_back(wanted_expand_axes(c));
    }
    for (const nlohmann::json& axes : wanted) {
      const kernels::Lookup found = set.lookup(axes);
      if (found.variant != nullptr && seen.insert({c.triton, found.variant->id}).second) {
        out.variants.emplace_back(&set, found.variant);
      } else if (found.variant == nullptr && seen.insert({c.triton, found.problem}).second) {
        out.unavailable.push_back(fmt::format("Triton {}: {}", c.triton, found.problem));
      }
    }
  }
  out.compilers.assign(compilers.begin(), compilers.end());
  return out;
}

}  // namespace lp::sweep
