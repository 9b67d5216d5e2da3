#include "sweep/case_variants.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "families/family.hpp"
#include "kernels/abi.hpp"
#include "plan/vllm_defaults.hpp"

namespace lp::sweep {

namespace {

/// The manifest axes of a kernel's tile and pipeline, the same for every op.
AxisValues tile_axes(std::string_view op, DType input, DType weight, const plan::KernelKnobs& k) {
  AxisValues a;
  a.set("op", AxisValue::of_text(op));
  a.set("input_dtype", AxisValue::of_text(dtype_name(input)));
  a.set("weight_dtype", AxisValue::of_text(dtype_name(weight)));
  a.set("block_m", AxisValue::of_int(k.block_m));
  a.set("block_n", AxisValue::of_int(k.block_n));
  a.set("block_k", AxisValue::of_int(k.block_k));
  a.set("num_warps", AxisValue::of_int(k.num_warps));
  a.set("num_stages", AxisValue::of_int(k.num_stages));
  a.set("even_k", AxisValue::of_bool(k.even_k));
  return a;
}

/// The kernel the case's family launches in `slot`: the op of the variants it needs.
std::string_view kernel_in(const plan::Case& c, ImageSlot slot) {
  for (const KernelLaunch& k : family_of(c.op).kernels()) {
    if (k.slot == slot) {
      return op_name(k.kernel);
    }
  }
  return op_name(c.op);
}

/// A variant's last axes: the FP8 families' scale group, or the dual-stream switches.
void set_scales_or_pdl(AxisValues& wanted, const plan::Case& c, std::int64_t tail_ns, bool with_tail) {
  if (family_of(c.op).traits().scale_group_axis) {
    wanted.set("scale_group", AxisValue::of_int(c.scale_group));
    return;
  }
  wanted.set("gdc", AxisValue::of_bool(c.gdc));
  if (with_tail) {
    wanted.set("tail_ns", AxisValue::of_int(tail_ns));
  }
}

}  // namespace

AxisValues wanted_expand_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.expand;
  if (const plan::FusedMoeCase* fused = c.fused_moe()) {
    const plan::FusedMoeCase& f = *fused;
    AxisValues wanted = tile_axes("fused_moe", c.weight_dtype, c.weight_dtype, k);
    wanted.set("add_inputs", AxisValue::of_bool(c.add_inputs));
    wanted.set("rank", AxisValue::of_int(c.rank));
    wanted.set("top_k", AxisValue::of_int(f.mul_routed_weight ? 1 : f.top_k));
    wanted.set("mul_routed_weight", AxisValue::of_bool(f.mul_routed_weight));
    wanted.set("npid_factor", AxisValue::of_int(f.npid_factor));
    return wanted;
  }
  const bool same_stride =
      std::adjacent_find(c.hidden.begin(), c.hidden.end(), std::not_equal_to<>()) == c.hidden.end();
  // The dtype the expand reads its A operand in: the family's (lora_linear: fp32 buf).
  Problem shape;
  shape.op = c.op;
  shape.input_dtype = c.input_dtype;
  const DType input = a_operand_dtype(shape);
  AxisValues wanted = tile_axes(kernel_in(c, ImageSlot::expand), input, c.weight_dtype, k);
  wanted.set("add_inputs", AxisValue::of_bool(c.add_inputs));
  wanted.set("num_slices", AxisValue::of_int(c.num_slices));
  wanted.set("same_stride", AxisValue::of_bool(same_stride));
  if (wanted.text("op") == "expand") {
    // The JIT's specialisation of the widths (N is the widest slice, the row stride their sum).
    const std::int64_t widest = *std::max_element(c.hidden.begin(), c.hidden.end());
    const std::int64_t total = std::accumulate(c.hidden.begin(), c.hidden.end(), std::int64_t{0});
    wanted.set("n_spec", AxisValue::of_text(kernels::integer_specialization(widest)));
    wanted.set("out_stride_spec", AxisValue::of_text(kernels::integer_specialization(total)));
  }
  set_scales_or_pdl(wanted, c, 0, false);
  if (k.num_ctas != 1) {
    // A tuned file's: no embedded variant has it, and the lookup says so.
    wanted.set("num_ctas", AxisValue::of_int(k.num_ctas));
  }
  return wanted;
}

AxisValues wanted_shrink_axes(const plan::Case& c) {
  const plan::KernelKnobs& k = *c.shrink;
  // shrink reads x in the weight dtype (lora_linear's x too).
  AxisValues wanted = tile_axes(kernel_in(c, ImageSlot::shrink), c.weight_dtype, c.weight_dtype, k);
  wanted.set("split_k", AxisValue::of_int(k.split_k));
  wanted.set("num_slices", AxisValue::of_int(c.num_slices));
  wanted.set("group_size_m", AxisValue::of_int(k.group_size_m));
  set_scales_or_pdl(wanted, c, c.gdc ? k_chain_tail_ns : 0, true);
  if (k.num_ctas != 1) {
    wanted.set("num_ctas", AxisValue::of_int(k.num_ctas));
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
    std::vector<std::pair<AxisValues, int>> wanted;  // the axes, the pairs its image gets
    if (c.shrink) {
      wanted.emplace_back(wanted_shrink_axes(c), 0);
    }
    if (c.expand) {
      wanted.emplace_back(wanted_expand_axes(c), c.amplify);
    }
    for (const auto& [axes, amplify] : wanted) {
      const kernels::Lookup found = set.lookup(axes);
      const std::string image = found.variant == nullptr ? std::string()
                                : amplify > 0 ? fmt::format("{}|amplify={}", found.variant->id, amplify)
                                              : found.variant->id;
      if (found.variant != nullptr && seen.insert({c.triton, image}).second) {
        out.variants.push_back({&set, found.variant, amplify});
      } else if (found.variant == nullptr && seen.insert({c.triton, found.problem}).second) {
        out.unavailable.push_back(fmt::format("Triton {}: {}", c.triton, found.problem));
      }
    }
  }
  out.compilers.assign(compilers.begin(), compilers.end());
  return out;
}

namespace {

/// What the launch will refuse of a found expand-side variant for case `c`: a slice width
/// its N parameter was compiled to assume divisible by 16 (the worker's AbiViolation,
/// worker/launch.cpp, which stays the authority: this previews it for a dry run). The
/// 16-bit expand is looked up by its width axes and always agrees; the FP8 expand has
/// none, and its variants assume N divisible by 16.
std::string width_problem(const plan::Case& c, const kernels::Lookup& found) {
  if (found.variant == nullptr) {
    return found.problem;
  }
  const std::vector<std::string>& d16 = found.variant->specialization.divisible_by_16;
  if (std::find(d16.begin(), d16.end(), "N") == d16.end()) {
    return {};
  }
  for (const std::int64_t n : c.hidden) {
    if (kernels::integer_specialization(n) != "divisible_by_16") {
      return fmt::format("variant {} assumes N is divisible by 16; the case has N={} (the sets carry no variant "
                         "specialised for it)",
                         found.variant->id, n);
    }
  }
  return {};
}

}  // namespace

std::vector<plan::Dropped> cases_without_variant(const plan::Plan& plan, const kernels::KernelSets& sets) {
  std::vector<plan::Dropped> out;
  std::map<std::string, std::size_t> at;  // reason -> index in out
  for (const plan::Case& c : plan.cases) {
    const kernels::KernelSet& set = sets.at(c.triton);
    std::string problem;
    if (c.shrink) {
      problem = set.lookup(wanted_shrink_axes(c)).problem;
    }
    if (problem.empty() && c.expand) {
      problem = width_problem(c, set.lookup(wanted_expand_axes(c)));
    }
    if (problem.empty()) {
      continue;
    }
    // What is missing, without the nearest variants the lookup names (one example each).
    const std::string reason = fmt::format("Triton {}: {}", c.triton, problem.substr(0, problem.find(" (nearest")));
    const auto [it, added] = at.try_emplace(reason, out.size());
    if (added) {
      out.push_back({reason, 0});
    }
    ++out[it->second].count;
  }
  std::stable_sort(out.begin(), out.end(), [](const plan::Dropped& a, const plan::Dropped& b) { return a.count > b.count; });
  return out;
}

}  // namespace lp::sweep
