#include "model/metrics.hpp"

#include <fmt/format.h>

#include "model/symptom.hpp"

namespace lp {

std::string BadElement::describe() const {
  const auto hex = [&](std::uint32_t bits) {
    return dtype == DType::f32 ? fmt::format("{:#010x}", bits) : fmt::format("{:#06x}", bits);
  };
  return fmt::format("token {}, column {} (slice {}{}): expected {} ({}), got {} ({})", token, column, slice,
                     untouched_row ? ", a row without LoRA that must stay untouched" : "", expected,
                     hex(expected_bits), actual, hex(actual_bits));
}

std::string CompareMetrics::summary() const {
  const auto count = [](const std::optional<std::uint64_t>& n) { return n ? fmt::format("{}", *n) : "n/a"; };
  std::string text = fmt::format(
      "{} {} of {} elements mismatched (nan {}, inf {}, unwritten {}), {} writes to untouched rows, "
      "{} of {} tiles failing, max abs dev {:.3g}, max rel dev {:.3g}, max dev/tol {:.3g} (atol {:.3g}, rtol {:.3g})",
      passed() ? "PASS" : "FAIL", mismatches, elements, nan, inf, count(unwritten), untouched_rows_written,
      failing_tiles, total_tiles, max_abs_dev, max_rel_dev, worst_dev_over_tolerance, atol, rtol);
  if (reference_nonfinite > 0) {
    text += fmt::format(", INVALID: {} reference elements are not finite", reference_nonfinite);
  }
  if (const std::string symptom = describe_symptom({mismatches, nan, inf, huge, unwritten}); !symptom.empty()) {
    text += "; " + symptom;
  }
  if (first_bad) {
    text += "; first bad: " + first_bad->describe();
  }
  return text;
}

std::optional<double> CaseTiming::bandwidth_gbps() const noexcept {
  if (!kernel_ms || !bytes) {
    return std::nullopt;
  }
  return *kernel_ms > 0.0 ? static_cast<double>(*bytes) / (*kernel_ms * 1e-3) / 1e9 : 0.0;
}

}  // namespace lp
