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

#include <nlohmann/json_fwd.hpp>

#include "report/blocks.hpp"
#include "report/case_record.hpp"
#include "report/case_store.hpp"
#include "report/verdict.hpp"
#include "util/files.hpp"

namespace lp::report {

/// Version of the report format; generated from configs/schema/report.schema.json.
std::string_view schema_version();

/// Why the sweep's exit code is what it is.
/// nothing_compatible: every case was incompatible (exit 3), so a gate pinned to one
/// Triton and one ptxas that cannot read its PTX never passes on nothing.
enum class Outcome { clean, failures, invalid_controls, interrupted, nothing_compatible };

/// The summary's "outcome" word: "clean", "failures", "invalid_controls", ...
std::string_view to_string(Outcome outcome);

/// Counts and the failures worth reading first.
struct Summary {
  std::map<Verdict, std::size_t> counts;
  std::optional<std::size_t> first_failure;    ///< index into the cases vector
  /// The failing case with the strongest evidence (FAIL, then fault/timeout, LATENT,
  /// incomplete, skipped, compile_error), then the fewest tokens, the smallest rank, plan order.
  std::optional<std::size_t> minimal_failure;
  std::optional<std::size_t> first_latent;
  Outcome outcome = Outcome::clean;
  int exit_code = 0;
};

/// Computes the summary. A case "fails" when its verdict is in `fail_on`.
/// `controls_valid` false gives outcome invalid_controls and exit 3 whatever the cases say.
Summary summarize(const CaseStore& cases, const std::set<Verdict>& fail_on, bool controls_valid);

/// How much a report says about each case: compact (the default; report/compact.hpp)
/// or full (one object per case, with the prose; --detail full).
enum class Detail { compact, full };

std::string_view to_string(Detail detail);
std::optional<Detail> parse_detail(std::string_view text);

/// Everything a report holds; fill the blocks, then write().
struct Report {
  Meta meta;
  Environment environment;
  Tolerances tolerances;
  Controls controls;
  CaseStore cases;
  std::vector<VariantRecord> variants;
  std::optional<Remedies> remedies;  ///< sweep --remedies (sweep/remedies.hpp)
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
  /// dump()'s text passed to `sink` piece by piece: a compact table's rows are made and
  /// written one at a time, never all held.
  void dump(const TextSink& sink) const;
  /// Summary of the cases with this report's fail_on and controls.
  [[nodiscard]] Summary summary() const;
  /// Writes to_json() atomically (temporary file in the same folder, then rename).
  void write(const std::string& path) const;
};

/// Current UTC time as ISO 8601 ("2026-12-01T10:20:30Z").
std::string utc_now_iso8601();

}  // namespace lp::report
