// loraprobe __worker: hidden; the sweep starts its GPU workers in this mode.

#include "cli/commands.hpp"
#include "worker/worker.hpp"

#include <memory>

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

}  // namespace lp::cli
