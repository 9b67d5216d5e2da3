#include "cli/app.hpp"

#include <algorithm>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace lp::cli {

namespace {

std::vector<std::string>& stored_command_line() {
  static std::vector<std::string> args;
  return args;
}

/// The program paths this command line names: the values of --ptxas, --nvdisasm and
/// each ptxas=PATH of --compiler/--compilers (comma-separated lists included), as
/// `--flag VALUE` or `--flag=VALUE`. Only these may run when given by path; the
/// same flags read back from a journal (sweep --resume) do not count.
std::vector<std::string> named_programs(const std::vector<std::string>& args) {
  std::vector<std::string> named;
  auto take = [&](const std::string& flag, const std::string& value) {
    if (flag == "--ptxas" || flag == "--nvdisasm") {
      named.push_back(value);
      return;
    }
    for (const std::string_view item : split(value)) {  // --compiler / --compilers: a comma-separated list
      if (item.starts_with("ptxas=")) {
        named.emplace_back(item.substr(6));
      }
    }
  };
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      break;
    }
    for (const char* flag : {"--ptxas", "--nvdisasm", "--compiler", "--compilers"}) {
      const std::string f(flag);
      if (a == f && i + 1 < args.size()) {
        take(f, args[i + 1]);
      } else if (a.rfind(f + "=", 0) == 0) {
        take(f, a.substr(f.size() + 1));
      }
    }
  }
  return named;
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
  tools::restrict_program_paths(named_programs(stored_command_line()));
  CLI::App app{"loraprobe: reproduce and diagnose the Hopper wgmma register hazard in vLLM's LoRA Triton kernels"};
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 clean, 1 failures (or a hazard), 2 bad input (flags, configs, journals, your kernel sets and\n"
      "files), 3 environment (no GPU, driver, nvdisasm or ptxas; invalid controls), 4 internal error (a bug).\n"
      "Run 'loraprobe <subcommand> --help' for the options and examples of each.");
  const std::vector<Command> commands = {
      add_sweep_command(app), add_list_command(app), add_inspect_command(app),
      add_env_command(app),   add_check_command(app), add_report_command(app), add_diff_command(app), add_repro_command(app), add_merge_command(app), add_version_command(app), add_worker_command(app),
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
