#pragma once
// The hidden `loraprobe __worker` mode: the only place a sweep touches CUDA. It
// reads one JSON request per line on stdin (load, load_batch, run, quit) and
// answers one JSON line on stdout. A sticky CUDA error ends the worker after it
// has reported the fault: the parent starts a fresh one.

#include <string>
#include <vector>

#include "protocol/protocol.hpp"


namespace lp::worker {

/// How the parent starts a worker.
struct WorkerOptions {
  std::vector<std::string> kernel_dirs;  ///< --kernel-dir sets besides the embedded ones
  bool allow_jit_cache = false;  ///< leave the driver's JIT cache on
  int device = 0;                ///< CUDA device ordinal
};

/// Exit status of a worker that stopped after a sticky CUDA error.
inline constexpr int k_worker_fault_exit = 4;

/// Runs the worker loop until stdin closes or "quit"; returns the exit status.
int run_worker(const WorkerOptions& options);

/// The GPU record of the worker's ready message (the report's environment.gpu).
protocol::GpuRecord gpu_record(int device);

}  // namespace lp::worker
