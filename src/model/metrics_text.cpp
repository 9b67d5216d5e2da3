#include "model/metrics_text.hpp"

#include <fmt/format.h>

namespace lp {

namespace {

std::string count_text(const std::optional<std::uint64_t>& n) { return n ? fmt::format("{}", *n) : "n/a"; }

}  // namespace

std::string metrics_sentence(const MetricsText& m) {
  const bool passed = m.mismatches.value_or(0) == 0 && m.untouched_rows_written.value_or(0) == 0 &&
                      m.reference_nonfinite.value_or(0) == 0;
  std::string text = fmt::format(
      "{} {} of {} elements mismatched (nan {}, inf {}, unwritten {}), {} writes to untouched rows, "
      "{} of {} tiles failing, max abs dev {:.3g}, max rel dev {:.3g}, max dev/tol {:.3g} (atol {:.3g}, rtol {:.3g})",
      passed ? "PASS" : "FAIL", count_text(m.mismatches), count_text(m.elements), count_text(m.nan), count_text(m.inf),
      count_text(m.unwritten), count_text(m.untouched_rows_written), count_text(m.failing_tiles),
      count_text(m.total_tiles), m.max_abs_dev, m.max_rel_dev, m.worst_dev_over_tolerance, m.atol, m.rtol);
  if (m.reference_nonfinite.value_or(0) > 0) {
    text += fmt::format(", INVALID: {} reference elements are not finite", *m.reference_nonfinite);
  }
  const std::string symptom = describe_symptom(
      {m.mismatches.value_or(0), m.nan.value_or(0), m.inf.value_or(0), m.huge, m.unwritten});
  if (!symptom.empty()) {
    text += "; " + symptom;
  }
  if (!m.first_bad.empty()) {
    text += "; first bad: " + m.first_bad;
  }
  return text;
}

}  // namespace lp
