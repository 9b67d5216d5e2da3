#pragma once
// One subcommand per file: each add_*_command registers its options on the app
// (filling an options struct it owns) and returns the function that runs it.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "repro/bundle.hpp"

namespace lp::cli {

/// A registered subcommand: its CLI11 node and the function that runs it after
/// parsing, returning the process exit code.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

Command add_sweep_command(CLI::App& app);
Command add_list_command(CLI::App& app);
Command add_inspect_command(CLI::App& app);
Command add_env_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_report_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_repro_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_version_command(CLI::App& app);
/// Prints what each bundle holds (repro and sweep --save-repro).
void print_bundles(const std::vector<repro::Bundle>& bundles);
/// The hidden `__worker` mode the sweep starts its GPU workers in.
Command add_worker_command(CLI::App& app);

}  // namespace lp::cli
