#pragma once
// CLI11 checks shared by the subcommands, so a flag is validated the same way
// everywhere (and before --dry-run returns).

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

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

/// The one -j rule of sweep and inspect: 0 (one per hardware thread) to 1024.
inline constexpr unsigned k_max_jobs = 1024;

/// CUDA device ordinals accepted by --device.
inline constexpr int k_max_device = 1023;

}  // namespace lp::cli
