#pragma once
// The before/after of an upgrade: two sweep reports, cases matched by their
// configuration (--match-compiler maps an old compiler to a new one, so ptxas=13.0
// in one report meets ptxas=13.3 in the other), verdict changes grouped, deviations
// that moved, cases in one report only, and what differs in the environment.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/document.hpp"

namespace lp::formats {

struct DiffOptions {
  std::map<std::string, std::string> match_compiler;  ///< old compiler -> new compiler
  bool latent_fails = false;                          ///< a new LATENT is a regression (--fail-on latent)
};

/// How far a case's worst deviation over tolerance may move before the diff names
/// it: half the tolerance (clean cases sit at <= 0.5 by the tolerance model).
inline constexpr double k_deviation_change = 0.5;

struct Diff {
  nlohmann::json json;  ///< {matched, newly_failing, newly_latent, fixed, other_changes, deviations, only_old, only_new, environment, regressed}
  bool regressed = false;
  std::string text() const;
};

/// Throws lp::InputError (exit 2) for documents that cannot be compared: not two
/// reports, or no case in common (read_document already refused a schema it cannot read).
Diff diff_reports(const Document& old_report, const Document& new_report, const DiffOptions& options);

}  // namespace lp::formats
