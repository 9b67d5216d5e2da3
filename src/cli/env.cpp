#include "cli/commands.hpp"
#include "util/error.hpp"

namespace lp::cli {

Command add_env_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("env", "(not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw NotBuiltYet("loraprobe env"); }};
}

}  // namespace lp::cli
