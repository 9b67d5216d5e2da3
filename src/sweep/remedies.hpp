#pragma once
// Measured remedies (sweep --remedies): for every configuration that ends LATENT or
// FAIL, the known fixes as neighbour cases, run in the same sweep, statically and
// dynamically, with what each costs in kernel time:
//   block_n 32         the field workaround (vLLM PR #48638)
//   num_stages 1       no software pipelining: no MMA in flight across loop trips
//   bf16 input         a bf16 shrink buffer, so the expand reads bf16 (vLLM PR #47869)
//   Triton <newest>    the newest embedded kernel set with its own ptxas
//   ptxas <13.3+>, and Triton <newest> + ptxas <13.3+>, when the run compiles with
//                      such a ptxas (the first says whether ptxas can fix the case's PTX)
// Each neighbour is the hazardous case with one thing changed (its id is that case's);
// one the plan already has is not run again.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "plan/plan.hpp"
#include "report/report.hpp"

namespace lp::sweep {

/// One remedy of one hazardous case.
struct RemedyCase {
  std::size_t hazard = 0;  ///< index into RemedyPlan::hazards
  std::string name;        ///< "block_n 32"
  std::string why;
  plan::Case neighbour;
  std::optional<std::size_t> existing;  ///< index of the plan's record when the plan has it
};

struct RemedyPlan {
  std::vector<report::CaseRecord> hazards;  ///< the hazardous cases the remedies are for
  std::vector<RemedyCase> remedies;
  std::vector<std::string> notes;                  ///< remedies that could not be planned, and why
};

/// The remedies of the hazardous cases of `records`: per configuration, its FAIL
/// cases (else its LATENT ones) at the fewest and the most tokens. `cases` are the plan's cases by id;
/// `tritons` the run's kernel sets (newest last); `ptxas_13_3` a compiler of the run
/// whose ptxas is 13.3 or newer, or empty.
RemedyPlan plan_remedies(const report::CaseStore& records,
                         const std::map<std::string, const plan::Case*>& cases, const std::vector<std::string>& tritons,
                         const std::string& ptxas_13_3);

/// Each remedy's record, in plan.remedies' order: the plan's own case (`cases`), one a
/// resumed journal measured (`measured`, by id), or one run now (`ran`, at index_of_id).
std::vector<report::CaseRecord> remedy_results(const RemedyPlan& plan, const report::CaseStore& cases,
                                               const std::map<std::string, report::CaseRecord>& measured,
                                               const std::vector<report::CaseRecord>& ran,
                                               const std::map<std::string, std::size_t>& index_of_id);

/// The report's remedies block: per hazardous case, each remedy's verdict, static
/// findings and kernel time against the hazardous case's ("cost").
report::Remedies remedies_record(const RemedyPlan& plan, const std::vector<report::CaseRecord>& results);

}  // namespace lp::sweep
