#pragma once
// The verdict of a case: what the worker observed, combined with what the static
// inspection of the SASS that ran says (DESIGN.md: FAIL, LATENT, PASS, ...).

#include <optional>
#include <string>

#include "report/report.hpp"
#include "report/verdict.hpp"
#include "protocol/protocol.hpp"

namespace lp::sweep {

struct Decision {
  report::Verdict verdict = report::Verdict::skipped;
  std::string reason;  ///< empty for a plain PASS
};

/// FAIL when any run was wrong; LATENT when none was but the SASS has hazards;
/// PASS when neither (with a reason when the SASS could not be inspected, named by
/// `not_inspected`); the worker's skipped / incomplete / fault / timeout as they are.
/// `static_findings` is nullopt when the SASS was not inspected.
///
/// An amplified case (`amplified` with pairs inserted) is decided on its amplified
/// SASS: FAIL "under amplification (D queued wgmma pairs)"; LATENT "not observed under
/// amplification". Where the amplification is void (amplified->void_reason) it cannot
/// speak for the kernel: the unamplified SASS's hazard stays LATENT (a FAIL still is
/// a FAIL), and a hazard only the amplified SASS has makes the case incomplete.
Decision decide(const protocol::JobResult& result, std::optional<int> static_findings, const std::string& not_inspected,
                const report::AmplificationRecord* amplified = nullptr);

}  // namespace lp::sweep
