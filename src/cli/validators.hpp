#pragma once
// CLI11 checks shared by the subcommands, so a flag is validated the same way
// everywhere (and before --dry-run returns).

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "report/verdict.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace lp::cli {

/// Refuses an empty value ("--config ''"), which would otherwise mean "not given".
inline CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& value) {
        return value.empty() ? std::string("an empty value: give one, or leave the option out") : std::string();
      },
      "NON-EMPTY", "NonEmpty");
}

/// Refuses nan and inf (CLI::Range lets nan through: every comparison with it is false).
inline CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& value) {
        const std::string_view digits = value.starts_with('+') ? std::string_view(value).substr(1) : value;
        const std::optional<double> v = parse_number<double>(digits);
        if (!v) {
          return "\"" + value + "\" is not a number";
        }
        if (!std::isfinite(*v)) {
          return "\"" + value + "\" is not a finite number";
        }
        return std::string();
      },
      "FINITE", "Finite");
}

/// A count of at least one: a whole number 1 or more ("0 not in range 0.000000 to
/// 1.8e308" was CLI::PositiveNumber's word for 0).
inline CLI::Validator count_from_one() {
  return CLI::Validator(
      [](std::string& value) {
        const std::optional<unsigned long long> v = parse_number<unsigned long long>(value);
        return v && *v >= 1 ? std::string()
                             : "\"" + value + "\": expected a whole number from 1 to 18446744073709551615";
      },
      "COUNT", "CountFromOne");
}

/// The one -j rule of sweep and inspect: 0 (one per hardware thread) to 1024.
inline constexpr unsigned k_max_jobs = 1024;

/// CUDA device ordinals accepted by --device.
inline constexpr int k_max_device = 1023;

/// The verdicts of --fail-on (sweep, report, diff): each name a verdict that can fail a
/// run, PASS refused. Throws lp::UsageError naming the first that is not.
inline std::set<report::Verdict> failing_verdicts(const std::vector<std::string>& names) {
  std::set<report::Verdict> out;
  for (const std::string& name : names) {
    const std::optional<report::Verdict> v = report::parse_verdict(name);
    if (!v || *v == report::Verdict::pass) {
      throw UsageError(fmt::format("--fail-on {}: not a failing verdict (latent, skipped, incomplete, FAIL, fault, "
                                   "timeout, compile_error)",
                                   name));
    }
    out.insert(*v);
  }
  return out;
}

}  // namespace lp::cli
