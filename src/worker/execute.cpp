#include "worker/execute.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "families/device.hpp"
#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "worker/launch.hpp"
#include "verify/case_buffers.hpp"
#include "verify/compare.hpp"
#include "verify/reference.hpp"
#include "verify/stats.hpp"
#include "util/checked.hpp"


namespace lp::worker {

using protocol::ImageRef;
using protocol::Job;
using protocol::JobResult;
using protocol::RunOutcome;

namespace {

/// Worse of two runs' metrics: a failing run beats a passing one, then more mismatches,
/// then a larger deviation over tolerance.
bool worse(const CompareMetrics& a, const CompareMetrics& b) {
  return std::make_tuple(!a.passed(), a.mismatches + a.untouched_rows_written, a.worst_dev_over_tolerance) >
         std::make_tuple(!b.passed(), b.mismatches + b.untouched_rows_written, b.worst_dev_over_tolerance);
}

const LoadedImage& image_for(const ImageTable& images, const std::optional<ImageRef>& ref, std::string_view what) {
  if (!ref) {
    throw AbiViolation(fmt::format("the job has no {} kernel", what));
  }
  const auto it = images.find(ref->key());
  if (it == images.end()) {
    throw AbiViolation(fmt::format("image {} was not loaded into this worker", ref->key()));
  }
  return it->second;
}

}  // namespace

std::uint64_t free_device_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  LP_CU_CHECK(driver().cuMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

// An upper estimate of what the case allocates: its family's tensors and the
// reference's scratch (families/*: device_bytes).
std::uint64_t estimate_device_bytes(const Problem& p) { return family_of(p.op).device_bytes(p); }

struct PreparedProblem {
  std::string key;  ///< reference_key of the problem
  LoraMetadata metadata;
  CaseBuffers buffers;
  /// The last job's tolerance, kept for the next job of the same Problem: it depends on
  /// fields beyond the key (split_k, amplify), and its reasons take formatting.
  std::optional<Problem> tolerance_of;
  Tolerance tolerance;
  std::string tolerance_why;  ///< its describe(), the metrics' tolerance_why

  /// tolerance_for(problem), computed only when the problem differs from the last one's.
  const Tolerance& tolerance_for_job(const Problem& problem) {
    if (!tolerance_of || !(*tolerance_of == problem)) {
      tolerance_of.reset();  // until both are made: a throw leaves nothing stale
      tolerance = tolerance_for(problem);
      tolerance_why = tolerance.describe();
      tolerance_of = problem;
    }
    return tolerance;
  }
};

std::shared_ptr<PreparedProblem> ProblemCache::take(const std::string& key) {
  if (m_last && m_last->key == key) {
    return m_last;
  }
  m_last.reset();
  return nullptr;
}

bool ProblemCache::holds(const Problem& problem) const { return m_last && m_last->key == reference_key(problem); }

class RunningJob {
 public:
  struct Kernel {
    const LoadedImage* image;
    std::unique_ptr<PreparedLaunch> launch;
  };
  RunningJob(const Job& j, Problem p, PinnedHostBuffer& r) : job(j), problem(std::move(p)), readback(r) {}

  Job job;
  Problem problem;
  PinnedHostBuffer& readback;
  std::shared_ptr<PreparedProblem> prepared;  // shared with the cache and later jobs of the problem
  std::vector<Kernel> kernels;  // in launch order: shrink first for lora_linear
  GpuSpan reference_span;
  bool computed_reference = false;  // false when the cache's reference serves
  std::string tolerance_why;  // the tolerance's description (the job's own: a later job may change the problem's)
  std::unique_ptr<QueuedComparisons> comparisons;
  std::vector<GpuSpan> runs;
  Event done;  // after the readback: all of this job's work
  StepTimes* steps = nullptr;
  std::vector<std::pair<double GpuStepTimes::*, Event>> marks;  // each ends the step it names

  /// With `steps`: an event here, ending the step `what` since the previous mark.
  void mark(double GpuStepTimes::*what, const Stream& stream) {
    if (steps != nullptr) {
      marks.emplace_back(what, Event());
      marks.back().second.record(stream);
    }
  }
  /// Adds the marked steps' GPU times to `steps` (the work has finished).
  void add_step_times() const {
    for (std::size_t i = 1; i < marks.size(); ++i) {
      steps->gpu.*(marks[i].first) += static_cast<double>(elapsed_ms(marks[i - 1].second, marks[i].second));
    }
  }
};

void RunningJobDeleter::operator()(RunningJob* job) const noexcept { delete job; }

namespace {

/// With StepTimes, adds the CPU time since its last lap to the step each lap names.
class Laps {
 public:
  explicit Laps(StepTimes* steps) : m_steps(steps) {
    if (m_steps != nullptr) {
      m_last = std::chrono::steady_clock::now();
    }
  }
  void lap(double HostStepTimes::*step) {
    if (m_steps != nullptr) {
      const auto now = std::chrono::steady_clock::now();
      m_steps->host.*step += std::chrono::duration<double, std::milli>(now - m_last).count();
      m_last = now;
    }
  }

 private:
  StepTimes* m_steps;
  std::chrono::steady_clock::time_point m_last;
};

/// Runs `body`, turning what it throws into the job's outcome: AbiViolation is
/// "refused", another lp::Error or a CUDA error "incomplete"; a sticky CUDA error
/// (the context is dead) is rethrown as StickyCudaError.
template <class Body>
std::optional<JobResult> judged(const Job& job, Body&& body) {
  JobResult result;
  result.index = job.index;
  result.case_id = job.case_id;
  try {
    return body();
  } catch (const StickyCudaError&) {
    throw;
  } catch (const AbiViolation& e) {
    result.outcome = RunOutcome::refused;
    result.reason = e.what();
  } catch (const CudaError& e) {
    const bool sticky = e.api() == CudaApi::driver && is_sticky(static_cast<CUresult>(e.code()));
    if (sticky) {
      throw StickyCudaError(e.api(), static_cast<CUresult>(e.code()), e.name(), e.what());
    }
    result.outcome = RunOutcome::incomplete;
    result.reason = e.what();
  } catch (const Error& e) {
    result.outcome = RunOutcome::incomplete;
    result.reason = e.what();
  }
  return result;
}

/// The job's result from its compared runs; with `timed`, the kernel and reference
/// times from its events (which must have completed).
JobResult result_of(const RunningJob& r, const std::vector<CompareMetrics>& compared, bool timed) {
  JobResult result;
  result.index = r.job.index;
  result.case_id = r.job.case_id;
  std::optional<CompareMetrics> worst;
  std::vector<double> kernel_ms;
  for (std::size_t run = 0; run < compared.size(); ++run) {
    const CompareMetrics& m = compared[run];
    if (timed) {
      kernel_ms.push_back(r.runs[run].ms());
    }
    ++result.runs;
    if (!m.passed()) {
      ++result.failed_runs;
    }
    if (!worst || worse(m, *worst)) {
      worst = m;
    }
  }
  if (!worst) {
    throw Error(fmt::format("case {} ran no repeat", r.job.case_id));
  }
  std::sort(kernel_ms.begin(), kernel_ms.end());
  CaseTiming timing;
  if (timed) {
    timing.kernel_ms = kernel_ms.empty() ? 0.0 : kernel_ms[kernel_ms.size() / 2];
    if (r.computed_reference) {
      timing.reference_ms = r.reference_span.ms();
    }
  }
  timing.bytes = compulsory_bytes(r.problem, r.prepared->metadata, &r.prepared->buffers.routing);
  const LaunchConfig& config = r.kernels.back().launch->config();
  timing.grid = {static_cast<std::int64_t>(config.grid[0]), static_cast<std::int64_t>(config.grid[1]),
                 static_cast<std::int64_t>(config.grid[2])};
  result.outcome = RunOutcome::ran;
  worst->tolerance_why = r.tolerance_why;
  result.metrics = *worst;
  result.timing = timing;
  if (result.failed_runs > 0) {
    result.reason = worst->summary();
  }
  return result;
}

/// The job's answer when its tensors do not fit in the device memory free now (after
/// the memory pool handed back what earlier cases freed); nullopt when they fit.
std::optional<JobResult> refused_for_memory(const Job& job, const Problem& problem, const Stream& stream) {
  const std::uint64_t needed = estimate_device_bytes(problem);
  std::uint64_t available = free_device_bytes();
  if (needed > available) {
    release_kept_device_memory(stream);
    available = free_device_bytes();
  }
  if (needed <= available) {
    return std::nullopt;
  }
  JobResult result;
  result.index = job.index;
  result.case_id = job.case_id;
  result.outcome = RunOutcome::refused;
  result.reason = fmt::format("out of memory: case {} needs about {:.1f} GiB, {:.1f} GiB free", job.case_id,
                              static_cast<double>(needed) / (1 << 30), static_cast<double>(available) / (1 << 30));
  return result;
}

/// Queues the job's comparisons and its runs, each with the output reset before it and
/// compared after it.
void queue_runs(RunningJob& r, CaseBuffers& buffers, const Stream& stream) {
  const Job& job = r.job;
  const Problem& problem = r.problem;
  const Tolerance& tolerance = r.prepared->tolerance_for_job(problem);
  r.tolerance_why = r.prepared->tolerance_why;
  CompareSpec spec;
  spec.dtype = output_dtype(problem);
  spec.atol = job.atol.value_or(tolerance.atol);
  spec.rtol = job.rtol.value_or(tolerance.rtol);
  spec.tile = TileShape{job.block_m, job.block_n};
  spec.unwritten_measurable = unwritten_measurable(problem);
  const CompareLayout layout = compare_layout(problem);
  const auto repeats = static_cast<std::size_t>(std::max(job.repeats, 0));
  r.comparisons = std::make_unique<QueuedComparisons>(layout, spec, repeats, stream);
  r.runs = std::vector<GpuSpan>(repeats);
  r.mark(&GpuStepTimes::setup, stream);
  for (GpuSpan& run : r.runs) {
    reset_output(problem, buffers, stream);
    r.mark(&GpuStepTimes::resets, stream);
    run.time(stream, [&] {
      for (std::size_t i = 0; i < r.kernels.size(); ++i) {
        // The dual-stream chain: the expand (the last kernel) may start while the shrink runs.
        const bool programmatic = job.pdl && i + 1 == r.kernels.size() && i > 0;
        r.kernels[i].launch->launch(r.kernels[i].image->function, stream, programmatic);
      }
    });
    r.mark(&GpuStepTimes::kernels, stream);
    r.comparisons->enqueue(output_of(problem, buffers), buffers.reference, row_lora_of(problem, buffers));
    r.mark(&GpuStepTimes::comparisons, stream);
  }
}

}  // namespace

StartedJob start_job(const Job& job, const ImageTable& images, const CublasHandle& cublas, const Stream& stream,
                     PinnedHostBuffer& readback, ProblemCache& cache, StepTimes* steps) {
  StartedJob started;
  Laps laps(steps);
  RunningJobPtr running(new RunningJob(job, job.problem, readback));
  running->steps = steps;
  started.result = judged(job, [&]() -> std::optional<JobResult> {
    RunningJob& r = *running;
    Problem& problem = r.problem;
    problem.lora_of = make_token_mapping(problem.num_tokens, problem.num_loras, problem.seed);
    validate(problem);
    const std::string key = reference_key(problem);
    r.prepared = cache.take(key);
    const bool reused = r.prepared != nullptr;
    if (!reused) {
      if (std::optional<JobResult> refused = refused_for_memory(job, problem, stream)) {
        return refused;
      }
    }
    laps.lap(&HostStepTimes::problem);
    // Everything below is queued on the stream, with stream-ordered buffers. Until
    // the work is handed on to the caller, an exception still leaves none of it queued.
    r.mark(nullptr, stream);  // the start of the setup step
    if (!r.prepared) {
      auto prepared = std::make_shared<PreparedProblem>();
      prepared->key = key;
      prepared->metadata = build_lora_metadata(problem.lora_of, problem.num_loras);
      prepared->buffers = make_case_buffers(problem, prepared->metadata, stream);
      r.prepared = std::move(prepared);
    }
    laps.lap(&HostStepTimes::tensors);
    LoraMetadata& metadata = r.prepared->metadata;
    CaseBuffers& buffers = r.prepared->buffers;
    StreamDrain drain(stream);
    for (const KernelLaunch& k : family_of(problem.op).kernels()) {
      const std::optional<ImageRef>& ref = k.slot == ImageSlot::expand ? job.expand : job.shrink;
      const LoadedImage& image = image_for(images, ref, op_name(k.kernel));
      r.kernels.push_back(
          {&image, std::make_unique<PreparedLaunch>(*image.variant, k.kernel, problem, metadata, buffers, stream)});
    }
    laps.lap(&HostStepTimes::launches);
    if (!reused) {
      enqueue_reference(problem, metadata, buffers, cublas, stream, r.reference_span);
      r.computed_reference = true;
    }
    laps.lap(&HostStepTimes::reference);
    queue_runs(r, buffers, stream);
    laps.lap(&HostStepTimes::runs);
    if (readback.bytes() < r.comparisons->readback_bytes()) {
      // Freeing the smaller one may wait for the device: rare (a few KiB hold 100 repeats).
      readback = PinnedHostBuffer(std::max<std::size_t>(r.comparisons->readback_bytes(), std::size_t{64} << 10));
    }
    r.comparisons->enqueue_readback(readback);
    r.mark(&GpuStepTimes::readbacks, stream);
    r.done.record(stream);
    drain.dismiss();
    cache.keep(r.prepared);  // queued whole: the next job of the problem may share it
    laps.lap(&HostStepTimes::readback);
    return std::nullopt;
  });
  if (!started.result) {
    started.running = std::move(running);
  }
  return started;
}

JobResult finish_job(RunningJob& r) {
  Laps laps(r.steps);
  return *judged(r.job, [&]() -> std::optional<JobResult> {
    r.done.synchronize();
    laps.lap(&HostStepTimes::wait);
    if (r.steps != nullptr) {
      r.add_step_times();
    }
    JobResult result = result_of(r, r.comparisons->metrics_from(r.readback), /*timed=*/true);
    laps.lap(&HostStepTimes::result);
    return result;
  });
}

bool landed(const RunningJob& r) { return r.comparisons && r.comparisons->arrived(r.readback); }

JobResult landed_result(const RunningJob& r) {
  return result_of(r, r.comparisons->metrics_from(r.readback), /*timed=*/false);
}

const Job& job_of(const RunningJob& r) { return r.job; }

}  // namespace lp::worker
