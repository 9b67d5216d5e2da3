#include "verify/stats.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace lp {

double FailureRate::rate() const noexcept {
  return runs == 0 ? 0.0 : static_cast<double>(failures) / static_cast<double>(runs);
}

std::optional<double> FailureRate::upper_bound_95() const noexcept {
  if (failures != 0 || runs == 0) {
    return std::nullopt;
  }
  return std::min(1.0, 3.0 / static_cast<double>(runs));
}

double rule_of_three_upper_bound(std::uint64_t runs) {
  if (runs == 0) {
    throw Error("rule of three: no runs, so no bound on the failure probability");
  }
  return std::min(1.0, 3.0 / static_cast<double>(runs));
}

std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& metadata, const MoeRouting* given) {
  const auto live = static_cast<std::uint64_t>(metadata.live_tokens());
  const auto used = static_cast<std::uint64_t>(metadata.used_loras());
  const auto slices = static_cast<std::uint64_t>(p.num_slices());
  const auto rank = static_cast<std::uint64_t>(p.rank);
  const auto h_tot = static_cast<std::uint64_t>(p.hidden_total());
  const std::uint64_t w = dtype_size(p.weight_dtype);

  if (p.op == Op::fused_moe) {
    // x rows of live pairs' tokens (or pairs), A and B of the (adapter, expert) groups
    // in use, the live pairs' output rows written (and read back with ADD_INPUTS).
    const MoeRouting built = given != nullptr ? MoeRouting{} : make_moe_routing(p);
    const MoeRouting& routing = given != nullptr ? *given : built;
    const auto pairs = static_cast<std::uint64_t>(routing.live_pairs());
    const auto groups = static_cast<std::uint64_t>(routing.groups.size());
    const auto k = static_cast<std::uint64_t>(p.hidden_in);
    const std::uint64_t x_rows = p.moe.mul_routed_weight ? pairs : live;
    return x_rows * k * w + slices * groups * rank * (k + h_tot / slices) * w +
           pairs * h_tot * w * (p.add_inputs ? 2 : 1);
  }
  std::uint64_t shrink = 0;
  if (p.op != Op::expand) {
    const auto h_in = static_cast<std::uint64_t>(p.hidden_in);
    const std::uint64_t x = dtype_size(p.input_dtype);
    shrink = live * h_in * x                 // x rows of live tokens
             + slices * used * rank * h_in * x  // A of the LoRAs in use
             + slices * live * rank * 4;        // buf written (fp32)
  }
  std::uint64_t expand = 0;
  if (p.op != Op::shrink) {
    const std::uint64_t in = dtype_size(p.expand_input_dtype());
    expand = slices * live * rank * in     // buf read
             + used * h_tot * rank * w     // B of the LoRAs in use, every slice
             + live * h_tot * w            // y written
             + (p.add_inputs ? live * h_tot * w : 0);  // y read back for ADD_INPUTS
  }
  return shrink + expand;
}

}  // namespace lp
