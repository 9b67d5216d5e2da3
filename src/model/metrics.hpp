#pragma once
// What a case measured: the comparison's metrics (verify/compare.hpp defines each
// count) and the case's timing. The worker fills them, the report keeps them, the
// formats render them; model/metrics_json.hpp is their one JSON form.

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "model/dtype.hpp"

namespace lp {

/// The first failing element. `column` is y's column (off_s + n) or buf's r.
struct BadElement {
  std::uint64_t index = 0;  ///< row-major element index in the output tensor (not in reports)
  std::int64_t slice = 0;
  std::int64_t token = 0;
  std::int64_t column = 0;
  double expected = 0.0;
  double actual = 0.0;
  std::uint32_t expected_bits = 0;
  std::uint32_t actual_bits = 0;
  bool untouched_row = false;  ///< in a row of a token without LoRA (a write that should not be)
  DType dtype = DType::f32;    ///< of the bits above (a report says it by the bits' width)
  /// "token 17, column 4096 (slice 1): expected 0.4375 (0x3ee0), got nan (0x7fff)".
  [[nodiscard]] std::string describe() const;
};

/// Everything the comparison measures (definitions in verify/compare.hpp).
struct CompareMetrics {
  std::uint64_t elements = 0;
  std::uint64_t untouched_elements = 0;  ///< not in reports
  std::uint64_t nan = 0;
  std::uint64_t inf = 0;
  /// Always counted by this loraprobe; nullopt in a report from before 4.1.0, which did not.
  std::optional<std::uint64_t> huge = 0;
  std::optional<std::uint64_t> unwritten;
  std::uint64_t untouched_rows_written = 0;
  std::uint64_t mismatches = 0;
  std::uint64_t reference_nonfinite = 0;
  double max_abs_dev = 0.0;  ///< NaN and Inf allowed (a report spells them "nan", "inf")
  double max_rel_dev = 0.0;
  double worst_dev_over_tolerance = 0.0;
  std::optional<BadElement> first_bad;
  std::uint64_t failing_tiles = 0;
  std::uint64_t total_tiles = 0;
  double atol = 0.0;  ///< the tolerance used, for the report
  double rtol = 0.0;
  double rel_floor = 0.0;     ///< not in reports
  std::string tolerance_why;  ///< how atol and rtol were derived (ToleranceModel::describe), for the report
  /// No mismatch, no write to an untouched row, and a finite reference.
  [[nodiscard]] bool passed() const noexcept { return mismatches == 0 && untouched_rows_written == 0 && reference_nonfinite == 0; }
  /// The one sentence of what the comparison measured, rebuilt from the fields wherever it
  /// is shown (a full report's metrics.summary, the formats): "PASS 0 of 4096 elements
  /// mismatched (nan 0, inf 0, unwritten 0), 0 writes to untouched rows, 0 of 32 tiles
  /// failing, max abs dev 0.00195, max rel dev 0.0039, max dev/tol 0.12 (atol 0.0156,
  /// rtol 0.0156)", then ", INVALID: ..." for a non-finite reference, "; <symptom>"
  /// (model/symptom.hpp) and "; first bad: ...".
  [[nodiscard]] std::string summary() const;
};

/// How long a case took, and what it moved.
struct CaseTiming {
  std::optional<double> kernel_ms;     ///< CUDA-event time of the kernel launch(es); nullopt: not timed
  std::optional<double> reference_ms;  ///< CUDA-event time of the cuBLAS reference (casts, gathers, GEMMs)
  std::optional<std::uint64_t> bytes;  ///< compulsory_bytes() (verify/stats.hpp)
  /// The last kernel's launch grid; nullopt in compact reports, which do not keep it.
  std::optional<std::array<std::int64_t, 3>> grid;
  /// bytes / kernel time in GB/s (1e9 bytes per second); 0 when kernel_ms is 0; nullopt
  /// when either is unknown.
  [[nodiscard]] std::optional<double> bandwidth_gbps() const noexcept;
};

}  // namespace lp
