#include "cli/gpu_probe.hpp"

#include <fmt/format.h>

#include "cuda/context.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "util/error.hpp"
#include "worker/worker.hpp"

namespace lp::cli {

std::optional<protocol::GpuRecord> probe_gpu(int device, bool allow_jit_cache, std::string& why) {
  std::optional<protocol::GpuRecord> gpu;
  why = error_of([&] {
    init_driver(allow_jit_cache);
    if (device < 0 || device >= device_count()) {
      throw EnvironmentError(fmt::format("no CUDA device {} ({} present)", device, device_count()));
    }
    // Free memory and the loading mode are read in a context, as a worker has one.
    PrimaryContext context(device);
    context.make_current();
    gpu = worker::gpu_record(device);
  });
  if (!why.empty()) {
    why = fmt::format("no CUDA device: {}", why);
    gpu.reset();
  }
  return gpu;
}

}  // namespace lp::cli
