#include "sweep/decide.hpp"

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
    return {Verdict::latent, report::latent_reason(*static_findings, r.runs)};
  }
  if (!static_findings) {
    return {Verdict::pass, "SASS not inspected: " + not_inspected};
  }
  return {Verdict::pass, ""};
}

}  // namespace lp::sweep
