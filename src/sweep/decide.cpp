#include "sweep/decide.hpp"

#include <fmt/format.h>

namespace lp::sweep {

using report::Verdict;

namespace {

/// The phrase every amplified verdict carries.
std::string under(int amplify) { return fmt::format("under amplification ({} queued wgmma pairs)", amplify); }

/// decide() for a case whose expand kernel had pairs inserted, once it ran.
Decision decide_amplified(const protocol::JobResult& r, std::optional<int> findings, const std::string& not_inspected,
                          const report::AmplificationRecord& a) {
  const bool made_by_amplifier = findings && *findings > 0 && a.unamplified_findings && *a.unamplified_findings == 0;
  if (made_by_amplifier) {
    return {Verdict::incomplete,
            fmt::format("amplification void: {}{}", a.void_reason,
                        r.failed_runs > 0 ? fmt::format(" ({} of {} runs wrong: {})", r.failed_runs, r.runs, r.reason)
                                          : std::string())};
  }
  if (r.failed_runs > 0) {
    std::string reason = fmt::format("{}: {} of {} runs wrong: {}", under(a.amplify), r.failed_runs, r.runs, r.reason);
    if (!a.void_reason.empty()) {
      reason += "; note: " + a.void_reason;
    }
    return {Verdict::fail, reason};
  }
  if (findings && *findings > 0) {
    return {Verdict::latent, fmt::format("{}; not observed {}", report::latent_reason(*findings, r.runs), under(a.amplify))};
  }
  if (a.unamplified_findings && *a.unamplified_findings > 0) {
    return {Verdict::latent, fmt::format("amplification void: {}; {}", a.void_reason,
                                         report::latent_reason(*a.unamplified_findings, r.runs))};
  }
  if (!findings) {
    return {Verdict::pass, fmt::format("SASS not inspected: {}", not_inspected)};
  }
  return {Verdict::pass, ""};
}

}  // namespace

Decision decide(const protocol::JobResult& r, std::optional<int> static_findings, const std::string& not_inspected,
                const report::AmplificationRecord* amplified) {
  if (amplified != nullptr && amplified->sites > 0 && r.outcome == protocol::RunOutcome::ran) {
    return decide_amplified(r, static_findings, not_inspected, *amplified);
  }
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
