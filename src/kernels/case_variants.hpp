#pragma once
// Which variant of the kernel set a planned case needs: the bridge between the
// sweep's axes (plan::Case) and the manifest's axes.

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"

namespace lp::kernels {

/// The manifest axes (plus "op") of the expand kernel a case launches: for expand
/// and for the second half of lora_linear (whose expand input is fp32).
/// Precondition: c.expand is set.
nlohmann::json wanted_expand_axes(const plan::Case& c);

/// The manifest axes (plus "op") of the shrink kernel a case launches: for shrink and
/// the first half of lora_linear. Precondition: c.shrink is set.
nlohmann::json wanted_shrink_axes(const plan::Case& c);

/// vLLM's GROUP_SIZE_M for shrink; the kernel set is built with it.
inline constexpr int k_shrink_group_size_m = 8;

}  // namespace lp::kernels
