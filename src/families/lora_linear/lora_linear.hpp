#pragma once
// The lora_linear family: vLLM's dual-stream chain, a shrink then an expand whose
// input is the shrink's fp32 buf (the path on which vLLM hits the bug;
// docs/problem.md). It is the shrink and the expand families composed.

#include "families/family.hpp"

namespace lp {

[[nodiscard]] const KernelFamily& lora_linear_family() noexcept;

}  // namespace lp
