#include "sweep/controls.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lp::sweep {

using report::CaseRecord;
using report::Verdict;

namespace {

std::string must_be(const char* which, const CaseRecord& r, const char* wanted) {
  return fmt::format("the {} control ({}) must {} but is {}{}", which, r.variant.value_or("?"), wanted,
                     report::to_string(r.verdict), r.reason.empty() ? "" : ": " + r.reason);
}

std::string summary_of(const CaseRecord& r) {
  return r.metrics ? r.metrics->summary() : "";
}

}  // namespace

std::string control_problem(const ControlPair& pair) {
  std::string reason;
  if (pair.positive.verdict != Verdict::fail) {
    reason = must_be("positive", pair.positive, "FAIL");
  }
  if (pair.negative.verdict != Verdict::pass && pair.negative.verdict != Verdict::latent) {
    reason += (reason.empty() ? "" : "; ") + must_be("negative", pair.negative, "PASS");
  }
  return reason;
}

std::string control_problem(const AmplifiedControl& control) {
  if (control.record.verdict == Verdict::pass) {
    return {};
  }
  return must_be(fmt::format("amplified {} ({} pairs, Triton {})", control.role, control.amplify, control.triton).c_str(),
                 control.record, "PASS");
}

report::Controls controls_record(const std::vector<ControlPair>& pairs, const std::vector<AmplifiedControl>& amplified,
                                 const std::vector<std::string>& amplified_notes, report::RaceRecord race) {
  report::Controls controls;
  controls.ran = true;
  controls.sets.emplace();
  std::vector<std::string> all_reasons;
  for (const ControlPair& pair : pairs) {
    const std::string reason = control_problem(pair);
    report::SetControlsRecord entry{pair.triton, reason.empty(), pair.positive, pair.negative, std::nullopt};
    if (!reason.empty()) {
      fmt::print(stderr, "sweep: INVALID RUN: Triton {} set: {}\n", pair.triton, reason);
      entry.reason = reason;
      all_reasons.push_back(fmt::format("Triton {}: {}", pair.triton, reason));
    } else {
      fmt::print(stderr, "sweep: controls of the Triton {} set behave: positive FAIL ({}), negative PASS ({})\n",
                 pair.triton, summary_of(pair.positive), summary_of(pair.negative));
    }
    controls.sets->push_back(std::move(entry));
  }
  std::vector<report::AmplifiedControlRecord> amplified_records;
  for (const AmplifiedControl& a : amplified) {
    const std::string reason = control_problem(a);
    report::AmplifiedControlRecord entry{a.triton, a.role, a.amplify, reason.empty(), std::nullopt, a.record};
    if (!reason.empty()) {
      fmt::print(stderr, "sweep: INVALID RUN: {}\n", reason);
      entry.reason = reason;
      all_reasons.push_back(reason);
    } else {
      fmt::print(stderr, "sweep: amplified control {} of Triton {} at {} pairs behaves: PASS ({})\n", a.role, a.triton,
                 a.amplify, summary_of(a.record));
    }
    amplified_records.push_back(std::move(entry));
  }
  for (const std::string& note : amplified_notes) {
    fmt::print(stderr, "sweep: warning: {}\n", note);
  }
  fmt::print(stderr, "sweep: race control: {}\n", race.summary);
  controls.valid = all_reasons.empty();
  controls.race = std::move(race);
  if (!amplified.empty() || !amplified_notes.empty()) {
    controls.amplified = std::move(amplified_records);
    controls.amplified_notes = amplified_notes;
  }
  if (!all_reasons.empty()) {
    controls.reason = fmt::format("{}", fmt::join(all_reasons, "; "));
  }
  return controls;
}

}  // namespace lp::sweep
