#pragma once
// The before/after of an upgrade: two sweep reports, cases matched by their
// configuration (--match-compiler maps an old compiler to a new one, so ptxas=13.0
// in one report meets ptxas=13.3 in the other), verdict changes grouped, deviations
// that moved, cases in one report only, and what differs in the environment.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "formats/document.hpp"
#include "util/json_text.hpp"

namespace lp::formats {

struct DiffOptions {
  std::map<std::string, std::string> match_compiler;  ///< old compiler -> new compiler
  bool latent_fails = false;                          ///< a new LATENT is a regression (--fail-on latent)
};

/// How far a case's worst deviation over tolerance may move before the diff names
/// it: half the tolerance (clean cases sit at <= 0.5 by the tolerance model).
inline constexpr double k_deviation_change = 0.5;

/// A case as the diff names it.
struct DiffCase {
  std::string id;
  std::string label;  ///< plan::row_label of its axes
  std::int64_t tokens = 0;
  report::Verdict verdict = report::Verdict::skipped;
  std::string reason;
};

/// A configuration whose verdict changed.
struct VerdictChange {
  DiffCase before;
  DiffCase after;
};

/// A configuration whose worst deviation over tolerance moved by more than k_deviation_change.
struct DeviationChange {
  DiffCase after;
  double before = 0.0;  ///< NaN: not finite ("nan/inf" in the JSON)
  double now = 0.0;
};

/// What differs in the two environments (a GPU field, the compilers, the kernel sets).
struct EnvironmentChange {
  std::string what;
  JsonText before;
  JsonText now;
};

struct Diff {
  std::string old_path;
  std::string new_path;
  std::size_t matched = 0;
  std::vector<VerdictChange> newly_failing;
  std::vector<VerdictChange> newly_latent;
  std::vector<VerdictChange> newly_incompatible;
  std::vector<VerdictChange> fixed;
  std::vector<VerdictChange> now_compilable;
  std::vector<VerdictChange> other_changes;
  std::vector<DeviationChange> deviations;
  std::vector<DiffCase> only_old;
  std::vector<DiffCase> only_new;
  std::vector<EnvironmentChange> environment;
  bool regressed = false;

  /// {matched, newly_failing, ..., only_new, environment, regressed, old, new}: diff --json.
  [[nodiscard]] nlohmann::json to_json() const;
  /// to_json() as text, indented by 2, with a final newline.
  [[nodiscard]] std::string json_text() const;
  [[nodiscard]] std::string text() const;
};

/// Throws lp::InputError (exit 2) for documents that cannot be compared: not two
/// reports, or no case in common (read_document already refused a schema it cannot read).
Diff diff_reports(const Document& old_report, const Document& new_report, const DiffOptions& options);

}  // namespace lp::formats
