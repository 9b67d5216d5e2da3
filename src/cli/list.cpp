#include "cli/commands.hpp"
#include "util/error.hpp"

namespace lp::cli {

Command add_list_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("list", "List the embedded kernel variants (not built yet)");
  sub->allow_extras();
  return {sub, []() -> int { throw NotBuiltYet("loraprobe list"); }};
}

}  // namespace lp::cli
