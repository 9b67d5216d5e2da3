#pragma once
// The verdict on the controls of a sweep: each Triton set's positive control must
// FAIL and its negative control must PASS (or be LATENT); if not, the detector is
// broken and no verdict of the run can be trusted. A run with amplify D > 0 also
// runs statically clean images that have a register-A wgmma amplified by D (block_n
// 32, Triton 3.9's default): each must PASS, or the amplifier itself makes wrong
// numbers and the run is invalid. The race control only informs.
//
// Validity rests on what the runs showed alone: FAIL comes from wrong numbers, and
// PASS and LATENT differ only in the static part, so a record made before the
// static inspection is in (record_of without images) is judged the same as the
// final one. The sweep therefore starts its cases once the controls ran, and
// records the controls when the inspection is in.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace lp::sweep {

/// One Triton set's control pair, as recorded.
struct ControlPair {
  std::string triton;
  report::CaseRecord positive;
  report::CaseRecord negative;
};

/// One amplified control, as recorded.
struct AmplifiedControl {
  std::string triton;
  std::string role;  ///< "block_n_32" or "fixed_default" (sweep/entries.hpp)
  int amplify = 0;
  report::CaseRecord record;
};

/// Why the pair does not behave; empty when it does.
std::string control_problem(const ControlPair& pair);

/// Why an amplified control does not behave (it must PASS); empty when it does.
std::string control_problem(const AmplifiedControl& control);

/// The report's controls block from every set's pair, the amplified controls (with
/// `amplified_notes`: those that could not be made) and the race control's block
/// (race_outcome): valid when every pair and every amplified control behaves. Prints
/// one line per set, per amplified control and for the race control on stderr.
report::Controls controls_record(const std::vector<ControlPair>& pairs, const std::vector<AmplifiedControl>& amplified,
                                 const std::vector<std::string>& amplified_notes, report::RaceRecord race);

}  // namespace lp::sweep
