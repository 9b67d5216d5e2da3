#include "cli/commands.hpp"
#include "util/error.hpp"

namespace lp::cli {

Command add_sweep_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("sweep", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw NotBuiltYet("loraprobe sweep"); }};
}

}  // namespace lp::cli
