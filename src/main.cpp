// loraprobe entry point: parse everything first, dispatch one subcommand, and
// catch every error once (util/guard.hpp).

#include "cli/app.hpp"
#include "util/guard.hpp"
#include "util/interrupt.hpp"

int main(int argc, char** argv) {
  lp::install_interrupt_handlers();
  return lp::run_guarded([&] { return lp::cli::run_app(argc, argv); });
}
