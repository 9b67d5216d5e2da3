#pragma once
// The record of one case, as a report, a journal and the controls hold it: its axis
// values, verdict, metrics and timing, static findings and the amplification that
// ran (configs/schema/report.schema.json#/$defs/case).

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/axis_values.hpp"
#include "model/metrics.hpp"
#include "report/verdict.hpp"
#include "util/json_in.hpp"

namespace lp::report {

/// The largest index or count a report's records may hold (cases, groups, findings, sites).
inline constexpr std::size_t k_max_count = k_max_json_count;
/// The largest GPU ordinal a report may name (--devices).
inline constexpr int k_max_device = 1023;

/// A verdict as a document spells it ("LATENT", ...). Throws lp::InputError at the
/// value's pointer for a word that is none.
Verdict read_verdict(const JsonIn& j);

/// The amplify count of an amplification or amplified-control record: its key is
/// "amplify" since report schema 5.0.0 and was "pairs" before. Throws lp::InputError
/// for a record with neither, or a count outside [1, k_max_amplify].
int read_amplify(const JsonIn& j);

/// What the amplifier did to a case's expand kernel (the `amplify` axis above 0;
/// src/ptx/amplify.hpp), and whether the amplified run can speak for the hazard.
struct AmplificationRecord {
  int amplify = 0;                ///< D: dependent wgmma pairs before each register-A wgmma
  std::size_t sites = 0;          ///< register-A wgmmas amplified (0: the PTX is unchanged)
  std::size_t pending_sites = 0;  ///< of which the next wgmma.wait_group leaves in flight
  /// The hazards of the same (variant, compiler) without the pairs, when inspected:
  /// static_findings beside it says whether they survived the amplification.
  std::optional<int> unamplified_findings;
  std::string serialised;   ///< ptxas's words (C7513/C7515) when it serialised the amplified wgmmas
  /// Why the amplified run says nothing about the kernel's hazard; empty when it does.
  std::string void_reason;

  [[nodiscard]] nlohmann::json to_json() const;
  /// Inverse of to_json(). Throws lp::InputError at the pointer of a missing, mistyped or
  /// out-of-range field.
  static AmplificationRecord from_json(const JsonIn& j);
  [[nodiscard]] bool operator==(const AmplificationRecord&) const = default;
};

/// The outcome of one case.
struct CaseRecord {
  std::size_t index = 0;     ///< plan order
  std::string id;            ///< stable case id
  AxisValues axes;     ///< the case's axis values
  std::optional<std::string> variant;  ///< kernel variant id, when one was chosen
  Verdict verdict = Verdict::skipped;
  std::string reason;        ///< why (for every verdict but PASS); empty: none
  int runs = 0;              ///< launches judged
  int failed_runs = 0;       ///< launches with wrong numbers
  std::optional<CompareMetrics> metrics;  ///< the worst run's (report.schema.json#/$defs/metrics), when it ran
  std::optional<CaseTiming> timing;       ///< kernel/reference ms, bytes, when it ran
  std::optional<int> static_findings;  ///< hazards in the SASS that ran, when inspected
  /// Who made those hazards: "ptx", "ptxas" or "none" (ptx::attribution), when the
  /// SASS and the PTX were both analysed.
  std::optional<std::string> attribution;
  std::optional<int> device;  ///< the GPU ordinal whose worker ran it (--devices); nullopt when none did
  std::optional<AmplificationRecord> amplification;  ///< amplify > 0 (then static_findings are the amplified SASS's)

  [[nodiscard]] nlohmann::json to_json() const;
  /// The short form used by summary.first_failure and friends.
  [[nodiscard]] nlohmann::json to_ref() const;
  /// Inverse of to_json() (--resume, merge, the formats). Throws lp::InputError at the
  /// pointer of a missing, mistyped or out-of-range field.
  static CaseRecord from_json(const JsonIn& j);
  /// As above for a record read from no file (tests, the worker's own records).
  static CaseRecord from_json(const nlohmann::json& j);
};

}  // namespace lp::report
