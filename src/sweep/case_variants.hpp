#pragma once
// Which variant of the kernel set a planned case needs: the bridge between the
// sweep's axes (plan::Case) and the manifest's axes.

#include <cstdint>

#include <nlohmann/json_fwd.hpp>

#include "compile/compiler.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"

namespace lp::sweep {

/// The TAIL_NS of the shrink a gdc case (vLLM's dual-stream chain) launches: 100 us of
/// spinning between its launch_dependents and its store, against an expand's start-up
/// of a few microseconds, so that an expand reading the buffer before its wait reads
/// it unwritten. The sets' producer variants carry it (scripts/kernelgen/variants.py
/// CHAIN_TAIL_NS; a test checks every set has them).
inline constexpr std::int64_t k_chain_tail_ns = 100'000;

/// The manifest axes (plus "op") of the kernel that writes a case's y: the expand for
/// expand and for the second half of lora_linear (whose expand input is fp32), the
/// fused-MoE kernel for fused_moe. Precondition: c.expand is set.
AxisValues wanted_expand_axes(const plan::Case& c);

/// The manifest axes (plus "op") of the shrink kernel a case launches: for shrink and
/// the first half of lora_linear. Precondition: c.shrink is set.
AxisValues wanted_shrink_axes(const plan::Case& c);

/// A (set, variant) a sweep loads, and the wgmma pairs its image is amplified with (0:
/// as built; only an expand is amplified: sweep/entries.cpp).
struct PlannedVariant {
  const kernels::KernelSet* set = nullptr;
  const kernels::Variant* variant = nullptr;
  int amplify = 0;
};

/// The static half of a sweep of `plan`: every (set, variant, amplify) its cases load,
/// in first-seen order, and its compilers (sorted). A case whose variant is missing is
/// named once per (Triton, problem) in `unavailable` ("Triton 3.8.0: ...").
struct PlannedVariants {
  std::vector<PlannedVariant> variants;
  std::vector<compile::Compiler> compilers;
  std::vector<std::string> unavailable;
};
PlannedVariants planned_variants(const plan::Plan& plan, const kernels::KernelSets& sets);

/// The cases of `plan` whose kernel set holds no variant for one of their kernels,
/// counted by what is missing ("Triton 3.8.0: no expand variant with block_n=256 in the
/// kernel set"), the most cases first: what a run would record as skipped, known
/// before any GPU time is spent.
std::vector<plan::Dropped> cases_without_variant(const plan::Plan& plan, const kernels::KernelSets& sets);


}  // namespace lp::sweep
