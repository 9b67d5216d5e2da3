#include "sweep/decide.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace lp::sweep {

using report::Verdict;

Decision decide(const protocol::JobResult& r, std::optional<int> static_findings, const std::string& not_inspected) {
  switch (r.outcome) {
    case protocol::RunOutcome::refused:
      return {Verdict::skipped, r.reason};
    case protocol::RunOutcome::incomplete:
      return {Verdict::incomplete, r.reason};
    case protocol::RunOutcome::fault:
      return {Verdict::fault, r.reason};
    case protocol::RunOutcome::timeout:
      return {Verdict::timeout, r.reason};
    case protocol::RunOutcome::ran:
      break;
  }
  if (r.failed_runs > 0) {
    return {Verdict::fail, fmt::format("{} of {} runs wrong: {}", r.failed_runs, r.runs, r.reason)};
  }
  if (static_findings && *static_findings > 0) {
    // Rule of three: 0 failures in n runs bounds the per-run rate by 3/n at 95%.
    return {Verdict::latent,
            fmt::format("the SASS has {} wgmma register hazard finding(s); not observed in {} runs (95% upper bound "
                        "on the per-run failure rate: {:.3g})",
                        *static_findings, r.runs, r.runs > 0 ? std::min(1.0, 3.0 / r.runs) : 1.0)};
  }
  if (!static_findings) {
    return {Verdict::pass, "SASS not inspected: " + not_inspected};
  }
  return {Verdict::pass, ""};
}

}  // namespace lp::sweep
