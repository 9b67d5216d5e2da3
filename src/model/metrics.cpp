#include "model/metrics.hpp"

#include <fmt/format.h>

#include "model/metrics_text.hpp"

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
  return metrics_sentence({mismatches, elements, nan, inf, huge, unwritten, untouched_rows_written, failing_tiles,
                           total_tiles, reference_nonfinite, max_abs_dev, max_rel_dev, worst_dev_over_tolerance, atol,
                           rtol, first_bad ? first_bad->describe() : std::string()});
}

std::optional<double> CaseTiming::bandwidth_gbps() const noexcept {
  if (!kernel_ms || !bytes) {
    return std::nullopt;
  }
  return *kernel_ms > 0.0 ? static_cast<double>(*bytes) / (*kernel_ms * 1e-3) / 1e9 : 0.0;
}

}  // namespace lp
