#pragma once
// The one sentence that says what a comparison measured, written from its fields at
// render time: by the worker's metrics (verify/compare.hpp CompareMetrics::summary,
// written in full reports as metrics.summary) and by the formats for a compact report,
// whose rows keep only the numbers. One function, so the two cannot drift.

#include <cstdint>
#include <optional>
#include <string>

#include "model/symptom.hpp"

namespace lp {

/// The fields of the sentence; a count a record lacks is nullopt ("n/a").
struct MetricsText {
  std::optional<std::uint64_t> mismatches;
  std::optional<std::uint64_t> elements;
  std::optional<std::uint64_t> nan;
  std::optional<std::uint64_t> inf;
  std::optional<std::uint64_t> huge;       ///< nullopt in reports before it was counted
  std::optional<std::uint64_t> unwritten;  ///< nullopt when not measurable
  std::optional<std::uint64_t> untouched_rows_written;
  std::optional<std::uint64_t> failing_tiles;
  std::optional<std::uint64_t> total_tiles;
  std::optional<std::uint64_t> reference_nonfinite;
  double max_abs_dev = 0.0;  ///< NaN and Inf allowed (a report spells them "nan", "inf")
  double max_rel_dev = 0.0;
  double worst_dev_over_tolerance = 0.0;
  double atol = 0.0;
  double rtol = 0.0;
  std::string first_bad;  ///< BadElement::describe() of the first failing element, or empty
};

/// "PASS 0 of 4096 elements mismatched (nan 0, inf 0, unwritten 0), 0 writes to
/// untouched rows, 0 of 32 tiles failing, max abs dev 0.00195, max rel dev 0.0039, max
/// dev/tol 0.12 (atol 0.0156, rtol 0.0156)", then ", INVALID: ..." for a non-finite
/// reference, "; <symptom>" (model/symptom.hpp) and "; first bad: ...". PASS means no
/// mismatch, no write to an untouched row and a finite reference.
std::string metrics_sentence(const MetricsText& m);

}  // namespace lp
