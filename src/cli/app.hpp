#pragma once
// The command line: CLI11 app with one subcommand per file in this folder.

namespace lp::cli {

/// Parses argv, dispatches the chosen subcommand and returns its exit code.
/// Throws lp::Fatal (and subclasses) for the caller in main to report.
int run_app(int argc, char** argv);

}  // namespace lp::cli
