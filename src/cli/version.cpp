#include <fmt/format.h>

#include "cli/commands.hpp"
#include "version.hpp"

namespace lp::cli {

Command add_version_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("version", "Print loraprobe's version and the git commit it was built from");
  return {sub, [] {
            fmt::print("loraprobe {} (git {})\n", k_version, k_git_sha);
            return 0;
          }};
}

}  // namespace lp::cli
