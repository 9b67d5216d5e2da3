// loraprobe entry point: parse everything first, dispatch one subcommand, and
// catch every error once, here.

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/interrupt.hpp"
#include "version.hpp"

int main(int argc, char** argv) {
  lp::install_interrupt_handlers();
  try {
    return lp::cli::run_app(argc, argv);
  } catch (const lp::Fatal& e) {
    // Messages quote values from documents and devices: shown, never interpreted by the terminal.
    fmt::print(stderr, "loraprobe: {}\n", lp::escape::terminal(e.what()));
    return static_cast<int>(e.code());
  } catch (const std::exception& e) {
    // A recoverable lp::Error is recorded against its case or file where it happens; one
    // that reaches here, or any other exception, is a bug in loraprobe, not bad input.
    fmt::print(stderr,
               "loraprobe: internal error: {}\nloraprobe: this is a bug in loraprobe {} (git {}); please report it "
               "with the command line and this message\n",
               lp::escape::terminal(e.what()), lp::k_version, lp::k_git_sha);
    return static_cast<int>(lp::ExitCode::internal);
  }
}
