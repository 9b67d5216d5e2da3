#pragma once
// The command line: CLI11 app with one subcommand per file in this folder.

#include <string>
#include <vector>

namespace lp::cli {

/// The arguments run_app was given, argv[0] included: what reports record as
/// meta.argv. Empty before run_app is called.
const std::vector<std::string>& command_line();

/// Prints each note ("loraprobe: note: ...") on stderr: input that still works but
/// should be written otherwise (deprecated spellings).
void print_notes(const std::vector<std::string>& notes);

/// Parses argv, dispatches the chosen subcommand and returns its exit code.
/// Throws lp::Fatal (and subclasses) for the caller in main to report.
int run_app(int argc, char** argv);

}  // namespace lp::cli
