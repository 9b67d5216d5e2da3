#include <fmt/format.h>

#include "cli/commands.hpp"
#include "version.hpp"

namespace lp::cli {

Command add_version_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("version", "Print loraprobe's version and the git commit it was built from");
  sub->footer(
      "Examples:\n"
      "  loraprobe version            # loraprobe 0.1.0 (git <sha>): paste it into bug reports\n"
      "  loraprobe env --json         # the version with the GPU, driver, compilers and kernel sets");
  return {sub, [] {
            fmt::print("loraprobe {} (git {})\n", k_version, k_git_sha);
            return 0;
          }};
}

}  // namespace lp::cli
