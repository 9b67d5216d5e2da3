// loraprobe __worker: hidden; the sweep starts its GPU workers in this mode.
// loraprobe __raise: hidden; throws what it is told, so a test can run every exit code
// of the contract through main (README "Exit codes").

#include "cli/commands.hpp"
#include "worker/worker.hpp"
#include "util/error.hpp"

#include <memory>
#include <stdexcept>

namespace lp::cli {

Command add_worker_command(CLI::App& app) {
  auto o = std::make_shared<worker::WorkerOptions>();
  CLI::App* sub = app.add_subcommand("__worker", "GPU worker of a sweep (started by loraprobe sweep; not for users)");
  sub->group("");  // hidden from --help
  sub->add_option("--kernel-dir", o->kernel_dirs);
  sub->add_flag("--allow-jit-cache", o->allow_jit_cache);
  sub->add_option("--device", o->device);
  return {sub, [o] { return worker::run_worker(*o); }};
}

Command add_raise_command(CLI::App& app) {
  auto what = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("__raise", "Throw an error of a kind (tests of the exit-code contract only)");
  sub->group("");  // hidden from --help
  sub->add_option("kind", *what, "usage|environment|error|exception")->required();
  return {sub, [what]() -> int {
            if (*what == "usage") {
              throw UsageError("__raise usage");
            }
            if (*what == "environment") {
              throw EnvironmentError("__raise environment");
            }
            if (*what == "error") {
              throw Error("__raise error");  // a recoverable error nobody recorded: a bug
            }
            throw std::logic_error("__raise exception");
          }};
}

}  // namespace lp::cli
