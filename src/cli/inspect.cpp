#include "cli/commands.hpp"
#include "util/error.hpp"

namespace lp::cli {

Command add_inspect_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("inspect", "Statically inspect SASS for the wgmma register hazard (not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw NotBuiltYet("loraprobe inspect"); }};
}

}  // namespace lp::cli
