#pragma once
// Runs one job on the GPU inside a worker: builds the case's tensors from the
// seed, computes the cuBLAS reference, launches the Triton kernel(s) through the
// manifest's ABI `repeats` times with fresh poison, and compares each run on the
// device. Everything here needs a CUDA context: only workers call it.

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cuda/cublas.hpp"
#include "cuda/memory.hpp"
#include "cuda/module.hpp"
#include "cuda/stream.hpp"
#include "kernels/kernel_set.hpp"
#include "protocol/protocol.hpp"

namespace lp::worker {

/// A kernel image loaded into the worker's context.
struct LoadedImage {
  const kernels::Variant* variant = nullptr;
  std::unique_ptr<Module> module;
  CUfunction function = nullptr;
};

/// Images by key (ImageRef::key).
using ImageTable = std::map<std::string, LoadedImage>;

/// Bytes a job's tensors and the reference's scratch need on the device (an upper
/// estimate: checked against free memory before anything is allocated).
std::uint64_t estimate_device_bytes(const Problem& problem);

/// Free device memory now (cuMemGetInfo; what the memory pool keeps is not free).
/// Throws lp::CudaError.
std::uint64_t free_device_bytes();

/// One problem's device tensors, their metadata and its cuBLAS reference (execute.cpp).
struct PreparedProblem;

/// The last problem a worker prepared, kept for the jobs of the same problem that
/// follow it (reference_key, families/family.hpp: the sweep sends them back to back):
/// their inputs are not generated again and their reference not computed again; each
/// job resets the output before each of its runs as before. Only the last is kept, so
/// what it holds on the device is one problem's tensors.
class ProblemCache {
 public:
  /// Drops the kept problem (its memory is freed once no queued job uses it). The
  /// worker calls it after a case that did not pass cleanly: a kernel that wrote
  /// outside its output could have changed the kept inputs.
  void forget() noexcept { m_last.reset(); }
  /// The kept problem when its reference_key is `key`, else nullptr; a miss drops the
  /// kept one (another problem's tensors go once no queued job uses them).
  [[nodiscard]] std::shared_ptr<PreparedProblem> take(const std::string& key);
  /// Whether the kept problem is `problem`'s (reference_key): a job of it then allocates
  /// only its few KiB of scratch.
  [[nodiscard]] bool holds(const Problem& problem) const;
  /// Keeps `prepared` for the next job of its problem.
  void keep(std::shared_ptr<PreparedProblem> prepared) noexcept { m_last = std::move(prepared); }

 private:
  std::shared_ptr<PreparedProblem> m_last;
};

/// The GPU time of a worker's jobs by step, in ms, from events recorded between the
/// steps (scripts/bench: LP_WORKER_TIMES=1). Only measured when asked: the events
/// are work on the stream too.
struct GpuStepTimes {
  double setup = 0;        ///< a new problem's inputs and reference, each job's scratch
  double resets = 0;       ///< the output's poison (or y_in) before each run
  double kernels = 0;      ///< the runs themselves
  double comparisons = 0;  ///< each run's comparison with the reference
  double readbacks = 0;    ///< the metrics' copy to the host
};

/// The worker's CPU time in start_job and finish_job by step, in ms (LP_WORKER_TIMES=1).
struct HostStepTimes {
  double problem = 0;    ///< the token mapping, validation, the problem's key, the memory check
  double tensors = 0;    ///< a new problem's tensors and metadata queued
  double launches = 0;   ///< the kernels' arguments prepared
  double reference = 0;  ///< a new problem's cuBLAS reference queued
  double runs = 0;       ///< the runs with their resets and comparisons queued
  double readback = 0;   ///< the metrics' copy and the job's event queued
  double wait = 0;       ///< finish_job's wait for the job's event
  double result = 0;     ///< finish_job's reading of the metrics and the times
};

/// Both, for LP_WORKER_TIMES=1.
struct StepTimes {
  GpuStepTimes gpu;
  HostStepTimes host;
};

/// A job whose work is queued on the stream and not yet waited for (execute.cpp).
class RunningJob;
struct RunningJobDeleter {
  void operator()(RunningJob* job) const noexcept;
};
/// Owns a running job; its destructor does not wait for the GPU (its device memory
/// is freed in stream order).
using RunningJobPtr = std::unique_ptr<RunningJob, RunningJobDeleter>;

/// What start_job gives: the job's result at once (it was refused, or its work could
/// not be queued; nothing of it is left on the stream), or its work, queued.
struct StartedJob {
  std::optional<protocol::JobResult> result;
  RunningJobPtr running;
};

/// Queues everything `job` does on `stream` and returns without waiting for the GPU:
/// the inputs and the reference (or the cache's, when it holds the job's problem; the
/// result's reference_ms is then null), `repeats` launches each with fresh poison and its
/// comparison, the copy of the metrics into `readback` (page-locked; grown when too
/// small, so it must not be one a running job still uses) and an event after it.
/// Work queued behind it on the stream runs after all of it, so a worker queues the
/// next case while this one is on the GPU. A refused or failed start is a result
/// (refused, incomplete). Throws StickyCudaError when the context is dead: a job
/// queued before this one faulted, or this one's partly queued work did. With
/// `steps`, events between its steps add their GPU times there when it finishes, and
/// its CPU time by step is added at once.
StartedJob start_job(const protocol::Job& job, const ImageTable& images, const CublasHandle& cublas,
                     const Stream& stream, PinnedHostBuffer& readback, ProblemCache& cache,
                     StepTimes* steps = nullptr);

/// Waits for the job's event (never for the whole stream: work queued behind it goes
/// on) and returns its result, "ran" with metrics and timings, or "incomplete".
/// Throws StickyCudaError when the context is dead; landed() then says whose fault.
protocol::JobResult finish_job(RunningJob& job);

/// Whether the job's metrics have landed in its readback memory: every piece of its
/// GPU work then ended without a fault, so a fault seen afterwards belongs to the
/// work queued behind it.
[[nodiscard]] bool landed(const RunningJob& job);

/// The result of a job that landed(), from its metrics alone, for when a fault of the
/// job behind it killed the context before its events could be read: "ran", judged
/// as finish_job judges it, with kernel_ms and reference_ms null (bytes and grid kept).
[[nodiscard]] protocol::JobResult landed_result(const RunningJob& job);

/// The index and case id of a running job, for the fault that ends it.
[[nodiscard]] const protocol::Job& job_of(const RunningJob& job);

}  // namespace lp::worker
