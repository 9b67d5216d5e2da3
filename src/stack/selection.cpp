// What check builds: the planned variants and their remedies' neighbours.

#include "stack/selection.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "families/family.hpp"
#include "sweep/case_variants.hpp"
#include "util/error.hpp"

namespace lp::stack {

std::string_view to_string(KernelRemedy remedy) {
  switch (remedy) {
    case KernelRemedy::block_n_32: return "block_n_32";
    case KernelRemedy::input_16bit: return "input_16bit";
    case KernelRemedy::stages_1: return "stages_1";
    case KernelRemedy::pdl_off: return "pdl_off";
  }
  return "?";
}

std::vector<std::string> Selection::ids() const {
  std::set<std::string> all(launched.begin(), launched.end());
  all.insert(for_run.begin(), for_run.end());
  for (const Neighbour& n : neighbours) {
    all.insert(n.id);
  }
  return {all.begin(), all.end()};
}

const kernels::Variant* neighbour_of(const kernels::KernelSet& set, const kernels::Variant& v, KernelRemedy remedy) {
  AxisValues wanted = v.axes;
  wanted.set("op", AxisValue::of_text(v.op));
  // The field report's remedies are for a kernel that casts its A in registers.
  const KernelFamily* family = family_named(v.op);
  const bool register_a = family != nullptr && family->traits().register_a_remedies;
  switch (remedy) {
    case KernelRemedy::block_n_32:
      if (!register_a || v.axes.integer("block_n") == 32) {
        return nullptr;
      }
      wanted.set("block_n", AxisValue::of_int(32));
      break;
    case KernelRemedy::input_16bit: {
      const std::optional<std::string> input = v.axes.text("input_dtype");
      const std::optional<std::string> weight = v.axes.text("weight_dtype");
      if (!register_a || !input || !weight || *input == *weight) {
        return nullptr;
      }
      wanted.set("input_dtype", AxisValue::of_text(*weight));
      break;
    }
    case KernelRemedy::stages_1:
      if (!register_a || v.axes.integer("num_stages").value_or(1) == 1) {
        return nullptr;
      }
      wanted.set("num_stages", AxisValue::of_int(1));
      break;
    case KernelRemedy::pdl_off:
      if (v.axes.boolean("gdc") != true) {
        return nullptr;
      }
      wanted.set("gdc", AxisValue::of_bool(false));
      break;
  }
  return set.lookup(wanted).variant;
}

Selection select_variants(const plan::Plan& plan, const kernels::KernelSets& sets) {
  const auto widest = std::max_element(sets.all().begin(), sets.all().end(), [](const auto& a, const auto& b) {
    return a.variants().size() < b.variants().size();
  });
  if (widest == sets.all().end()) {
    throw Error("no kernel set to resolve variant ids in");
  }
  const kernels::KernelSet& set = *widest;
  Selection out;
  out.resolved_in = set.triton();
  const sweep::PlannedVariants planned = sweep::planned_variants(plan, sets);
  std::set<std::string> seen;
  for (const sweep::PlannedVariant& planned_variant : planned.variants) {
    const kernels::Variant* variant = planned_variant.variant;
    // The same kernel in every set: take it (by id) from the widest one.
    if (set.find(variant->id) == nullptr || !seen.insert(variant->id).second) {
      continue;
    }
    std::string launched = variant->id;
    if (variant->axes.integer("tail_ns").value_or(0) > 0) {
      // The sweep's chain spins TAIL_NS before the shrink's store (sweep/case_variants.hpp);
      // vLLM's shrink does not: the kernel it launches is the one without.
      AxisValues wanted = variant->axes;
      wanted.set("op", AxisValue::of_text(variant->op));
      wanted.set("tail_ns", AxisValue::of_int(0));
      if (const kernels::Variant* plain = set.lookup(wanted).variant) {
        out.for_run.push_back(variant->id);
        launched = plain->id;
      }
    }
    if (std::find(out.launched.begin(), out.launched.end(), launched) == out.launched.end()) {
      out.launched.push_back(launched);
    }
  }
  out.unavailable = planned.unavailable;
  if (out.launched.empty()) {
    throw UsageError(fmt::format("the plan launches no kernel the matrix has{}",
                                 out.unavailable.empty() ? std::string()
                                                         : fmt::format(" ({})", out.unavailable.front())));
  }
  for (const std::string& id : out.launched) {
    const kernels::Variant& v = *set.find(id);
    for (KernelRemedy remedy :
         {KernelRemedy::block_n_32, KernelRemedy::input_16bit, KernelRemedy::stages_1, KernelRemedy::pdl_off}) {
      if (const kernels::Variant* n = neighbour_of(set, v, remedy)) {
        out.neighbours.push_back({remedy, id, n->id});
      }
    }
  }
  return out;
}

}  // namespace lp::stack
