#pragma once
// Repeats and timing: how often a case failed, what 0 failures in n runs can
// claim, and the bandwidth a kernel achieved.

#include <cstdint>
#include <optional>

#include "model/metrics.hpp"
#include "model/problem.hpp"

namespace lp {

/// k failing runs out of n.
struct FailureRate {
  std::uint64_t failures = 0;  ///< k
  std::uint64_t runs = 0;      ///< n
  /// k / n; 0 when n is 0.
  [[nodiscard]] double rate() const noexcept;
  /// For k = 0 and n > 0: the rule-of-three 95% upper bound on the per-run failure
  /// probability, min(1, 3/n) (exact bound 1 - 0.05^(1/n), which 3/n slightly exceeds,
  /// so it stays conservative; only meaningful for n of about 30 or more). nullopt
  /// when a failure was seen (the rate itself is then the statement) or n is 0.
  [[nodiscard]] std::optional<double> upper_bound_95() const noexcept;
};

/// min(1, 3/n). Throws lp::Error for n = 0 (no runs bound nothing).
[[nodiscard]] double rule_of_three_upper_bound(std::uint64_t runs);

}  // namespace lp
