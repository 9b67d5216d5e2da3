#pragma once
// The JSON report of a sweep (configs/schema/report.schema.json): meta,
// environment, tolerances, controls, cases, per-variant static findings and a
// summary with the first and the minimal failure. The exit code is derived here.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/metrics.hpp"
#include "model/axis_values.hpp"
#include "report/verdict.hpp"
#include "util/json_in.hpp"

namespace lp::report {

/// The largest index or count a report's records may hold (cases, groups, findings, sites).
inline constexpr std::size_t k_max_count = k_max_json_count;

/// Version of the report format; generated from configs/schema/report.schema.json.
std::string_view schema_version();

/// What the amplifier did to a case's expand kernel (the `amplify` axis above 0;
/// src/ptx/amplify.hpp), and whether the amplified run can speak for the hazard.
struct AmplificationRecord {
  int pairs = 0;                  ///< D: dependent wgmma pairs before each register-A wgmma
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

/// Why the sweep's exit code is what it is.
/// nothing_compatible: every case was incompatible (exit 3), so a gate pinned to one
/// Triton and one ptxas that cannot read its PTX never passes on nothing.
enum class Outcome { clean, failures, invalid_controls, interrupted, nothing_compatible };

/// Counts and the failures worth reading first.
struct Summary {
  std::map<Verdict, std::size_t> counts;
  std::optional<std::size_t> first_failure;    ///< index into the cases vector
  std::optional<std::size_t> minimal_failure;  ///< fewest tokens, then smallest rank, then plan order
  std::optional<std::size_t> first_latent;
  Outcome outcome = Outcome::clean;
  int exit_code = 0;
};

/// Computes the summary. A case "fails" when its verdict is in `fail_on`.
/// `controls_valid` false gives outcome invalid_controls and exit 3 whatever the cases say.
Summary summarize(const std::vector<CaseRecord>& cases, const std::set<Verdict>& fail_on, bool controls_valid);

/// How much a report says about each case: compact (the default; report/compact.hpp)
/// or full (one object per case, with the prose; --detail full).
enum class Detail { compact, full };

std::string_view to_string(Detail detail);
std::optional<Detail> parse_detail(std::string_view text);

/// Everything a report holds; fill the blocks, then write().
struct Report {
  nlohmann::json meta = nlohmann::json::object();
  nlohmann::json environment = nlohmann::json::object();
  nlohmann::json tolerances = {{"model", ""}, {"table", nlohmann::json::array()}, {"overrides", nlohmann::json::object()}};
  nlohmann::json controls = {{"ran", false}, {"valid", nullptr}};
  std::vector<CaseRecord> cases;
  nlohmann::json variants = nlohmann::json::array();
  nlohmann::json remedies;  ///< sweep --remedies (sweep/remedies.hpp), or null
  std::set<Verdict> fail_on = default_fail_on();
  Detail detail = Detail::compact;
  /// Why the run ended before its plan did (meta.interrupted), or nullopt: set by stop() only.
  std::optional<std::string> stopped;
  /// Whether a signal stopped it (Ctrl-C, SIGTERM): the summary's outcome is then interrupted.
  bool stopped_by_signal = false;

  /// Records why the run stopped short. The first reason is kept: what follows it (the
  /// controls recorded after Ctrl-C, the cases not run) is its consequence, not a second stop.
  void stop(std::string why, bool by_signal = false);

  /// The whole report as JSON, summary included.
  [[nodiscard]] nlohmann::json to_json() const;
  /// to_json() as the file holds it: indented, with a compact table's rows one per line.
  [[nodiscard]] std::string dump() const;
  /// Summary of the cases with this report's fail_on and controls.
  [[nodiscard]] Summary summary() const;
  /// Writes to_json() atomically (temporary file in the same folder, then rename).
  void write(const std::string& path) const;
};

/// Current UTC time as ISO 8601 ("2026-12-01T10:20:30Z").
std::string utc_now_iso8601();

}  // namespace lp::report
