#include "cli/app.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::cli {

int run_app(int argc, char** argv) {
  CLI::App app{"loraprobe: reproduce and diagnose the Hopper wgmma register hazard in LoRA Triton kernels"};
  app.require_subcommand(1);
  auto* version = app.add_subcommand("version", "Print the version");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*version) {
    fmt::print("loraprobe {}\n", "0.1.0");
    return 0;
  }
  throw NotBuiltYet("this subcommand");
}

}  // namespace lp::cli
