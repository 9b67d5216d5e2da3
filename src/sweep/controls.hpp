#pragma once
// The verdict on the controls of a sweep: each Triton set's positive control must
// FAIL and its negative control must PASS (or be LATENT); if not, the detector is
// broken and no verdict of the run can be trusted. The race control only informs.
//
// Validity rests on what the runs showed alone: FAIL comes from wrong numbers, and
// PASS and LATENT differ only in the static part, so a record made before the
// static inspection is in (record_of without images) is judged the same as the
// final one. The sweep therefore starts its cases once the controls ran, and
// records the controls when the inspection is in.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace lp::sweep {

/// One Triton set's control pair, as recorded.
struct ControlPair {
  std::string triton;
  report::CaseRecord positive;
  report::CaseRecord negative;
};

/// Why the pair does not behave; empty when it does.
std::string control_problem(const ControlPair& pair);

/// The report's controls block from every set's pair and the race control's block
/// (race_outcome): valid when every pair behaves. Prints one line per set and one
/// for the race control on stderr.
nlohmann::json controls_record(const std::vector<ControlPair>& pairs, nlohmann::json race);

}  // namespace lp::sweep
