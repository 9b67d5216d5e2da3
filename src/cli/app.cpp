#include "cli/app.hpp"

#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "util/error.hpp"

namespace lp::cli {

namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> args;
  return args;
}

}  // namespace

const std::vector<std::string>& command_line() { return stored_command_line(); }

void print_notes(const std::vector<std::string>& notes) {
  for (const std::string& note : notes) {
    fmt::print(stderr, "loraprobe: note: {}\n", note);
  }
}

int run_app(int argc, char** argv) {
  stored_command_line().assign(argv, argv + argc);
  CLI::App app{"loraprobe: reproduce and diagnose the Hopper wgmma register hazard in vLLM's LoRA Triton kernels"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 clean, 1 failures (or a hazard), 2 bad input (flags, configs, journals, your kernel sets and\n"
      "files), 3 environment (no GPU, driver, nvdisasm or ptxas; invalid controls), 4 internal error (a bug).\n"
      "Run 'loraprobe <subcommand> --help' for the options and examples of each.");
  const std::vector<Command> commands = {
      add_sweep_command(app), add_list_command(app), add_inspect_command(app),
      add_env_command(app),   add_report_command(app), add_diff_command(app), add_repro_command(app), add_merge_command(app), add_version_command(app), add_worker_command(app), add_raise_command(app),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (106, 109, ...) are not our contract: bad usage is 2.
    throw UsageError(e.what());
  }
  for (const Command& command : commands) {
    if (command.app->parsed()) {
      return command.run();
    }
  }
  throw UsageError("no subcommand given; run 'loraprobe --help'");
}

}  // namespace lp::cli
