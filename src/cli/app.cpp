#include "cli/app.hpp"

#include <algorithm>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "compile/compiler.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/text.hpp"
#include "version.hpp"

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
      if (const std::optional<compile::Compiler> c = compile::Compiler::parse(item); c && c->is_ptxas()) {
        named.push_back(c->ptxas);
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

/// The subcommands a user may type (the worker's, hidden, is loraprobe's own).
std::vector<const CLI::App*> visible_subcommands(const CLI::App& app) {
  std::vector<const CLI::App*> out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    out.push_back(sub);
  }
  return out;
}

/// "'bogus' is not a subcommand (did you mean 'sweep'?); the subcommands: ...".
std::string not_a_subcommand(const CLI::App& app, const std::string& word) {
  std::vector<std::string_view> names;
  for (const CLI::App* sub : visible_subcommands(app)) {
    names.push_back(sub->get_name());
  }
  const std::optional<std::string_view> best = nearest(word, names);
  return fmt::format("'{}' is not a subcommand{}; the subcommands: {}", word,
                     best ? fmt::format(" (did you mean '{}'?)", *best) : std::string(), fmt::join(names, ", "));
}

/// The subcommand the command line named, once parsed; nullptr when none was.
const CLI::App* parsed_subcommand(const CLI::App& app) {
  for (const CLI::App* s : visible_subcommands(app)) {
    if (s->parsed()) {
      return s;
    }
  }
  return nullptr;
}

/// CLI11's "The following arguments were not expected: x --confg", with the nearest
/// option of the subcommand named for the first unknown --option.
std::string unexpected_arguments(const CLI::App& app, const CLI::ExtrasError& e, const std::vector<std::string>& args) {
  const CLI::App* sub = parsed_subcommand(app);
  if (sub == nullptr) {
    return e.what();
  }
  std::vector<std::string> longs;
  for (const CLI::Option* option : sub->get_options()) {
    if (option->get_group().empty()) {
      continue;  // hidden: a test's hook, a deprecated spelling
    }
    for (const std::string& name : option->get_lnames()) {
      longs.push_back("--" + name);
    }
  }
  const std::vector<std::string_view> known(longs.begin(), longs.end());
  for (const std::string& a : args) {
    const std::string typed = a.substr(0, a.find('='));
    if (typed.rfind("--", 0) != 0 || std::find(longs.begin(), longs.end(), typed) != longs.end()) {
      continue;
    }
    const std::optional<std::string_view> best = nearest(typed, known);
    return fmt::format("{}: unknown option {}{}; 'loraprobe {} --help' lists them", sub->get_name(), typed,
                       best ? fmt::format(" (did you mean {}?)", *best) : std::string(), sub->get_name());
  }
  return e.what();
}

/// CLI11's "new is required" for a positional, as what is missing and the usage line:
/// "diff: NEW is missing (The report after); usage: loraprobe diff OLD NEW [OPTIONS]".
std::string missing_argument(const CLI::App& app, const CLI::RequiredError& e) {
  const CLI::App* sub = parsed_subcommand(app);
  if (sub == nullptr) {
    return e.what();
  }
  std::vector<std::string> usage;
  std::optional<std::pair<std::string, std::string>> missing;
  for (const CLI::Option* option : sub->get_options()) {
    if (!option->get_positional()) {
      continue;
    }
    std::string name = option->get_name();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    usage.push_back(option->get_items_expected_max() > 1 ? name + "..." : name);
    if (!missing && option->get_required() && option->count() == 0) {
      missing.emplace(name, option->get_description());
    }
  }
  if (!missing) {
    return e.what();
  }
  return fmt::format("{}: {} is missing ({}); usage: loraprobe {} {} [OPTIONS]", sub->get_name(), missing->first,
                     missing->second, sub->get_name(), fmt::join(usage, " "));
}

/// The arguments to parse: 'loraprobe help [SUBCOMMAND]' is '[SUBCOMMAND] --help'. A
/// first word that is no subcommand is refused with the nearest.
std::vector<std::string> arguments_to_parse(const CLI::App& app, const std::vector<std::string>& args) {
  const auto known = [&](const std::string& name) {  // hidden ones too: the worker is started by name
    return !app.get_subcommands([&](const CLI::App* s) { return s->get_name() == name; }).empty();
  };
  if (args.empty() || args.front().rfind('-', 0) == 0) {
    return args;
  }
  if (args.front() == "help") {
    if (args.size() > 1 && args[1] == "help") {
      return {"--help"};
    }
    if (args.size() > 1 && !known(args[1])) {
      throw UsageError(not_a_subcommand(app, args[1]));
    }
    return args.size() > 1 ? std::vector<std::string>{args[1], "--help"} : std::vector<std::string>{"--help"};
  }
  if (!known(args.front())) {
    throw UsageError(not_a_subcommand(app, args.front()));
  }
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
  tools::restrict_program_paths(named_programs(stored_command_line()));
  CLI::App app{"loraprobe: reproduce and diagnose the Hopper wgmma register hazard in vLLM's LoRA Triton kernels"};
  app.name("loraprobe");  // as usage lines and 'loraprobe help' say it, whatever path ran it
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 clean, 1 failures (or a hazard), 2 bad input (flags, configs, journals, your kernel sets and\n"
      "files), 3 environment (no GPU, driver, nvdisasm or ptxas; invalid controls), 4 internal error (a bug).\n"
      "Run 'loraprobe <subcommand> --help' for the options and examples of each.");
  const std::vector<Command> commands = {
      add_sweep_command(app), add_list_command(app), add_inspect_command(app),
      add_env_command(app),   add_check_command(app), add_report_command(app), add_diff_command(app), add_repro_command(app), add_merge_command(app), add_version_command(app), add_worker_command(app),
  };
  app.set_version_flag("--version", fmt::format("loraprobe {} (git {})", k_version, k_git_sha),
                       "Print loraprobe's version (as 'loraprobe version') and exit");
  const std::vector<std::string> args(stored_command_line().begin() + std::min<std::ptrdiff_t>(argc, 1),
                                      stored_command_line().end());
  std::vector<std::string> reversed = arguments_to_parse(app, args);
  std::reverse(reversed.begin(), reversed.end());  // CLI11 takes a vector last argument first
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError& e) {
    throw UsageError(unexpected_arguments(app, e, args));
  } catch (const CLI::RequiredError& e) {
    throw UsageError(missing_argument(app, e));
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
