#pragma once
// --compiler and --ptxas, spelled and meant the same in sweep and inspect:
//   --compiler LIST  replaces the compilers (prebuilt, driver, ptxas=PATH|VERSION|toolkit|triton;
//                    repeatable, comma-separated), as the config's `compiler` axis is replaced
//   --ptxas SPEC     adds ptxas=SPEC to them (repeatable)
// sweep's --compiler is the axis flag of plan/axes.cpp; this header adds inspect's
// and the --ptxas of both.

#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

namespace lp::cli {

inline constexpr const char* k_ptxas_flag_help =
    "Also compile with this ptxas: PATH, a VERSION installed under .tools/ptxas (a prefix means the newest), "
    "toolkit or triton (kernel-set variants: the bundled ptxas of each variant's Triton; files: the python3's "
    "Triton); the same as adding ptxas=SPEC to --compiler (repeatable)";

inline void add_ptxas_flag(CLI::App& sub, std::vector<std::string>& ptxas) {
  sub.add_option("--ptxas", ptxas, k_ptxas_flag_help)
      ->allow_extra_args(false);  // one value per flag: a path after it is an input, not a second ptxas
}

/// inspect's --compiler (and --compilers, its old spelling, with a deprecation note) and --ptxas.
inline void add_compiler_flags(CLI::App& sub, std::vector<std::string>& compilers, std::vector<std::string>& ptxas,
                               const std::string& default_text) {
  sub.add_option("--compiler", compilers,
                 fmt::format("Only these compilers ({}): prebuilt, ptxas=PATH|VERSION|toolkit|triton "
                             "(repeatable, comma-separated)",
                             default_text))
      ->delimiter(',')
      ->allow_extra_args(false);
  sub.add_option_function<std::vector<std::string>>(
         "--compilers",
         [&compilers](const std::vector<std::string>& values) {
           std::fprintf(stderr, "loraprobe: note: --compilers is deprecated: write --compiler\n");
           compilers.insert(compilers.end(), values.begin(), values.end());
         },
         "Deprecated spelling of --compiler")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->group("");
  add_ptxas_flag(sub, ptxas);
}

}  // namespace lp::cli
