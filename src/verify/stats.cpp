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

}  // namespace lp
