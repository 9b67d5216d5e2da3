#include "worker/worker.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <future>
#include <cstdio>
#include <exception>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/cublas.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "cuda/memory.hpp"
#include "kernels/kernel_sets.hpp"
#include "protocol/protocol.hpp"
#include "worker/channel.hpp"
#include "worker/execute.hpp"
#include "worker/race_kernel.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/parallel.hpp"

namespace lp::worker {

using namespace lp::protocol;

namespace {

void send(const Reply& message) {
  // One line per message, flushed: the parent reads line by line with a deadline.
  const std::string line = to_line(message) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

/// A compiled image waiting to be loaded: the cubin, and for a JIT the driver's log.
struct Built {
  std::string cubin;
  std::string log;
  double ms = 0.0;
  std::string error;
};

/// The driver's own JIT (cuLink), in the current thread, of `ptx` when the parent
/// sent one (an amplified PTX), else of the variant's PTX.
Built jit(const kernels::KernelSet& set, const kernels::Variant& v, const std::optional<std::string>& ptx,
          CUcontext context) {
  Built b;
  const auto start = std::chrono::steady_clock::now();
  try {
    LP_CU_CHECK(driver().cuCtxSetCurrent(context));
    Linker linker;
    linker.add_ptx(ptx ? *ptx : set.contents(*v.ptx), v.id + ".ptx");
    b.cubin = linker.complete();
    b.log = linker.info_log();
  } catch (const Error& e) {
    b.error = e.what();
  }
  b.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return b;
}

/// The device's primary context, made current (the stream and cuBLAS need it).
PrimaryContext current_context(int device) {
  PrimaryContext context(device);
  context.make_current();
  return context;
}

/// The answer of a case whose work the dead context took with it.
JobResult fault_of(const protocol::Job& job, const StickyCudaError& e) {
  return JobResult::lost(job.index, job.case_id, RunOutcome::fault, e.fault_reason() + ": " + e.what());
}

/// Whether `job` fits in the device memory free now. A failing query (a fault of
/// the pending case) says no: finishing that case first answers it properly.
bool fits_beside_pending(const protocol::Job& job) {
  try {
    return estimate_device_bytes(job.problem) <= free_device_bytes();
  } catch (const Error&) {
    return false;
  }
}

/// Where the worker's time went, in ms, for scripts/bench: with LP_WORKER_TIMES=1 in its
/// environment the worker prints them on stderr when it quits.
struct WorkerTimes {
  double waiting = 0;    ///< for a request, with nothing on the GPU
  double taking = 0;     ///< the requests taken while a case is on the GPU (parsed by the reader)
  double starting = 0;   ///< start_job: tensors, reference, launches, comparisons queued
  double finishing = 0;  ///< finish_job: the wait for the GPU, the metrics read
  std::size_t jobs = 0;
  StepTimes steps;  ///< the jobs' GPU time and start_job's and finish_job's CPU time by step
  /// With the reader's and the writer's threads' own times.
  [[nodiscard]] std::string line(const ReaderTimes& reader, double answering) const {
    const GpuStepTimes& gpu = steps.gpu;
    const HostStepTimes& host = steps.host;
    return fmt::format("worker: times: {} jobs; waiting {:.1f} ms, taking {:.1f} ms, starting {:.1f} ms, finishing "
                       "{:.1f} ms; beside them, parsing {:.1f} ms (run lines {:.1f} ms), answering {:.1f} ms\n"
                       "worker: GPU steps: setup {:.1f} ms, resets {:.1f} ms, kernels {:.1f} ms, comparisons "
                       "{:.1f} ms, readbacks {:.1f} ms\n"
                       "worker: CPU steps: problem {:.1f} ms, tensors {:.1f} ms, launches {:.1f} ms, reference {:.1f} "
                       "ms, runs {:.1f} ms, readback {:.1f} ms; wait {:.1f} ms, result {:.1f} ms\n",
                       jobs, waiting, taking, starting, finishing, reader.parsing, reader.parsing_jobs, answering,
                       gpu.setup, gpu.resets, gpu.kernels, gpu.comparisons, gpu.readbacks, host.problem, host.tensors,
                       host.launches, host.reference, host.runs, host.readback, host.wait, host.result);
  }
};

/// Adds the time from its construction to its end to `into`.
class AddTime {
 public:
  explicit AddTime(double& into) : m_into(into), m_start(std::chrono::steady_clock::now()) {}
  ~AddTime() { m_into += ms_since(m_start); }
  AddTime(const AddTime&) = delete;
  AddTime& operator=(const AddTime&) = delete;

 private:
  double& m_into;
  std::chrono::steady_clock::time_point m_start;
};

class Worker {
 public:
  Worker(const WorkerOptions& o, kernels::KernelSets sets)
      : m_options(o),
        m_sets(std::move(sets)),
        m_context(current_context(o.device)),
        m_cublas(m_stream) {
    keep_freed_device_memory();  // cases reuse what earlier ones freed (cuda/memory.hpp)
  }

  /// Serves requests until the input ends, `quit` or a fault; every answer is written
  /// before it returns. The worker's exit code.
  int loop() {
    const int code = serve();
    m_writer.drain();
    return code;
  }

 private:
  int serve() {
    reply(Ready{::getpid(), gpu_record(m_options.device)});
    while (true) {
      // Without a case on the GPU, wait for the next request; with one, take only a
      // request already there, and otherwise finish and answer that case first.
      std::optional<ParsedRequest> parsed;
      {
        AddTime t(m_pending ? m_times.taking : m_times.waiting);
        parsed = m_requests.next(/*wait=*/!m_pending);
      }
      if (!parsed) {
        if (const std::optional<int> code = finish_pending(nullptr)) {
          return *code;
        }
        if (m_requests.at_end()) {
          return 0;
        }
        continue;
      }
      // A request of a known type that is malformed is this binary's bug: it ends the
      // worker (lp::Error), after the case on the GPU is answered.
      const std::optional<Request>& request = parsed->request;
      const std::exception_ptr malformed = parsed->malformed;
      if (const auto* job = request ? std::get_if<RunJob>(&*request) : nullptr) {
        if (const std::optional<int> code = run(job->job)) {
          return *code;
        }
        continue;
      }
      // Anything else is answered after the case on the GPU, in the order asked (a
      // request it cannot take too: the parent awaits that case's answer first).
      if (const std::optional<int> code = finish_pending(nullptr)) {
        return *code;
      }
      if (malformed) {
        std::rethrow_exception(malformed);
      }
      if (const auto* bad = std::get_if<BadRequest>(&*request)) {
        reply(WorkerError{bad->error});
        continue;
      }
      if (std::holds_alternative<Quit>(*request)) {
        // Nothing is pending (every answer was sent and flushed), so the process ends
        // here without its destructors: unloading every module, destroying the cuBLAS
        // handle and the memory pool and releasing the context one by one took the
        // parent's wait 0.1-0.2 s longer on the H200; the driver frees all of it when
        // the process exits.
        m_writer.drain();
        if (m_step_times) {
          std::fputs(m_times.line(m_requests.times(), m_writer.answering_ms()).c_str(), stderr);
        }
        std::cout.flush();
        std::fflush(nullptr);
        std::_Exit(0);
      }
      if (const auto* batch = std::get_if<LoadBatch>(&*request)) {
        reply(LoadedBatch{load_batch(batch->items)});
      } else if (const auto* race = std::get_if<RaceRequest>(&*request)) {
        // The race control: a cubin the parent compiled and inspected (sweep/race_control.hpp).
        try {
          reply(RaceAnswer{run_race_kernel(race->cubin, race->ctas, race->launches, m_stream), {}, false});
        } catch (const StickyCudaError& e) {
          reply(RaceAnswer{std::nullopt, e.fault_reason() + ": " + e.what(), true});
          return k_worker_fault_exit;
        } catch (const Error& e) {
          reply(RaceAnswer{std::nullopt, e.what(), false});
        }
      }
    }
  }

  /// Queues a reply for the writer thread (answers go out in the order given).
  void reply(Reply message) { m_writer.send(std::move(message)); }

  /// A case whose work is on the GPU, answered once the next request is queued
  /// behind it (or none is waiting).
  struct Pending {
    RunningJobPtr running;
    std::chrono::steady_clock::time_point start;
    std::size_t readback = 0;  ///< which of m_readback it copies its metrics into
  };


  /// Answers a case. One that did not pass cleanly drops the kept problem: a kernel that
  /// wrote outside its output could have changed the kept inputs or reference.
  void send_result(const JobResult& result) {
    if (result.outcome != RunOutcome::ran || result.failed_runs > 0) {
      m_problems.forget();
    }
    reply(JobAnswer{result});
  }

  /// Queues `job` behind the pending case (whose answer then goes out), or answers
  /// it at once when it could not be queued. The worker's exit code when the context
  /// died (the fault is answered first).
  std::optional<int> run(const protocol::Job& job) {
    const auto start = std::chrono::steady_clock::now();
    if (m_pending && !m_problems.holds(job.problem) && !fits_beside_pending(job)) {
      // The case on the GPU holds memory this one may need: finish it first, so the
      // memory check sees what it would see without the overlap. A job of the kept
      // problem shares its tensors, so the query (cuMemGetInfo) is skipped for it.
      if (const std::optional<int> code = finish_pending(nullptr)) {
        return code;
      }
    }
    const std::size_t readback = m_pending ? 1 - m_pending->readback : 0;
    StartedJob started;
    ++m_times.jobs;
    try {
      AddTime t(m_times.starting);
      started = start_job(job, m_images, m_cublas, m_stream, m_readback[readback], m_problems,
                          m_step_times ? &m_times.steps : nullptr);
    } catch (const StickyCudaError& e) {
      // Its partly queued work runs only after the pending case's last copy: if that
      // landed, the fault is this job's, else the pending case's.
      if (m_pending && !landed(*m_pending->running)) {
        send_result(fault_of(job_of(*m_pending->running), e));
        return k_worker_fault_exit;
      }
      if (m_pending) {
        send_landed(*m_pending);
      }
      send_result(fault_of(job, e));
      return k_worker_fault_exit;
    }
    if (const std::optional<int> code = finish_pending(started.running ? &job : nullptr)) {
      return code;
    }
    if (started.result) {
      started.result->worker_ms = ms_since(start);
      send_result(*started.result);
      return std::nullopt;
    }
    m_pending = Pending{std::move(started.running), start, readback};
    return std::nullopt;
  }

  /// The answer of a pending case that landed while a later fault killed the context.
  void send_landed(const Pending& pending) {
    JobResult result;
    try {
      result = landed_result(*pending.running);
    } catch (const Error& e) {
      const protocol::Job& job = job_of(*pending.running);
      result = JobResult::lost(job.index, job.case_id, RunOutcome::incomplete, e.what());
    }
    result.worker_ms = ms_since(pending.start);
    send_result(result);
  }

  /// Waits for the pending case (if any) and answers it. `behind` is the job queued
  /// behind it on the stream, if its work is there: a fault seen while waiting is
  /// that job's when the pending case's metrics had landed (stream order: it started
  /// after them), else the pending case's. Returns the exit code after a fault.
  std::optional<int> finish_pending(const protocol::Job* behind) {
    if (!m_pending) {
      return std::nullopt;
    }
    Pending pending = std::move(*m_pending);
    m_pending.reset();
    try {
      JobResult result = [&] {
        AddTime t(m_times.finishing);
        return finish_job(*pending.running);
      }();
      result.worker_ms = ms_since(pending.start);
      send_result(result);
      return std::nullopt;
    } catch (const StickyCudaError& e) {
      if (behind != nullptr && landed(*pending.running)) {
        send_landed(pending);
        send_result(fault_of(*behind, e));
      } else {
        send_result(fault_of(job_of(*pending.running), e));
      }
      return k_worker_fault_exit;  // this context is dead; the parent starts a fresh worker
    }
  }

  /// Loads each item: prebuilt from its kernel set, a cubin the parent sent, or
  /// (compiler driver without a cubin) the driver's JIT, run for all such items in
  /// parallel threads. JIT results carry the cubin back, so the parent can inspect
  /// exactly what ran. (A malformed item failed the whole batch in parse_request.)
  std::vector<LoadResult> load_batch(const std::vector<LoadItem>& items) {
    std::vector<Built> built(items.size());
    std::vector<const kernels::Variant*> variants(items.size(), nullptr);
    std::vector<const kernels::KernelSet*> sets(items.size(), nullptr);
    std::vector<std::size_t> to_jit;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const ImageRef& image = items[i].image;
      sets[i] = m_sets.find(image.triton);
      if (sets[i] == nullptr) {
        built[i].error = fmt::format("no kernel set of Triton {} in this worker (sets: {})", image.triton,
                                     m_sets.versions_text());
        continue;
      }
      variants[i] = sets[i]->find(image.variant_id);
      if (variants[i] == nullptr || !variants[i]->ok()) {
        built[i].error = fmt::format("variant {} is not an ok variant of {}", image.variant_id, sets[i]->origin());
        continue;
      }
      try {
        if (items[i].cubin) {
          built[i].cubin = *items[i].cubin;
        } else if (image.compiler.kind == compile::CompilerKind::prebuilt) {
          built[i].cubin = sets[i]->contents(*variants[i]->cubin);
        } else if (image.compiler.kind == compile::CompilerKind::driver) {
          to_jit.push_back(i);
        } else {
          built[i].error = fmt::format("no cubin sent for {}", image.key());
        }
      } catch (const Error& e) {
        built[i].error = e.what();
      }
    }
    // The driver JIT is thread-safe per context: compile all PTX at once.
    parallel_for(to_jit.size(), 0, [&](std::size_t k) {
      const std::size_t i = to_jit[k];
      built[i] = jit(*sets[i], *variants[i], items[i].ptx, m_context.get());
    });
    LP_CU_CHECK(driver().cuCtxSetCurrent(m_context.get()));
    std::vector<LoadResult> results;
    for (std::size_t i = 0; i < items.size(); ++i) {
      LoadResult r;
      r.key = items[i].image.key();
      if (built[i].error.empty()) {
        try {
          LoadedImage image;
          image.variant = variants[i];
          image.module = std::make_unique<Module>(built[i].cubin);
          image.function = image.module->function(variants[i]->entry);
          m_images[r.key] = std::move(image);
          r.ok = true;
        } catch (const Error& e) {
          built[i].error = e.what();
        }
      }
      r.error = built[i].error;
      const bool jitted = items[i].image.compiler.kind == compile::CompilerKind::driver && !items[i].cubin;
      if (jitted && !built[i].cubin.empty()) {
        r.jit_cubin = built[i].cubin;
        r.jit_log = built[i].log;
        r.ms = built[i].ms;
      }
      results.push_back(std::move(r));
    }
    return results;
  }

  ReplyWriter m_writer{stdout};  ///< first: destroyed last, after every answer was written
  RequestReader m_requests{STDIN_FILENO};
  WorkerOptions m_options;
  kernels::KernelSets m_sets;
  PrimaryContext m_context;
  Stream m_stream;
  CublasHandle m_cublas;
  ImageTable m_images;
  /// Page-locked memory for the metrics of the pending case and the one queued behind it.
  ProblemCache m_problems;  ///< the last problem's tensors and reference, for its next cases
  WorkerTimes m_times;
  /// LP_WORKER_TIMES=1: the times are printed when the worker quits, with the GPU's by
  /// step (events between the steps of every job).
  bool m_step_times = std::getenv("LP_WORKER_TIMES") != nullptr;
  std::array<PinnedHostBuffer, 2> m_readback{PinnedHostBuffer(std::size_t{64} << 10),
                                             PinnedHostBuffer(std::size_t{64} << 10)};
  std::optional<Pending> m_pending;
};

}  // namespace

protocol::GpuRecord gpu_record(int device) {
  const DeviceInfo d = query_device_info(device);
  const DriverStatus& s = init_driver(false);
  protocol::GpuRecord g;
  g.ordinal = d.ordinal;
  g.device_count = device_count();
  g.name = d.name;
  g.uuid = d.uuid;
  g.pci_bus_id = d.pci_bus_id;
  g.compute_capability = fmt::format("{}.{}", d.cc_major, d.cc_minor);
  g.sm_count = d.sm_count;
  g.sm_clock_mhz = d.sm_clock_khz / 1000;
  g.memory_clock_mhz = d.memory_clock_khz / 1000;
  g.memory_bus_width_bits = d.memory_bus_width_bits;
  g.peak_bandwidth_gb_s = d.peak_bandwidth_gbps();
  g.total_memory_bytes = d.total_memory_bytes;
  g.free_memory_bytes = d.free_memory_bytes;
  g.ecc_enabled = d.ecc_enabled;
  g.driver_version = d.kernel_driver.empty() ? format_cuda_version(d.driver_version) : d.kernel_driver;
  g.driver_cuda_version = format_cuda_version(d.driver_version);
  g.runtime_version = format_cuda_version(d.runtime_version);
  g.cublas_version = d.cublas_version;
  g.driver_library = s.library;
  g.jit_cache_disabled = !s.jit_cache_allowed;
  g.cuda_cache_disable_env = s.cache_disable_env;
  g.module_loading_env = s.module_loading_env;
  g.module_loading = s.module_loading_mode;
  return g;
}

int run_worker(const WorkerOptions& options) {
  // The parent stops a worker with SIGTERM (then SIGKILL): here that means "die now",
  // not the parent's "finish what you can" (util/interrupt.hpp).
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
  // The manifests are read, and cuBLAS is loaded (about 0.1 s), while CUDA starts
  // (each takes a few hundred milliseconds). A cuBLAS that cannot be loaded is
  // reported where it is first needed, as if it had not been loaded here.
  std::future<kernels::KernelSets> sets =
      std::async(std::launch::async, [&options] { return kernels::KernelSets::load(options.kernel_dirs); });
  std::future<void> cublas = std::async(std::launch::async, [] {
    (void)error_of([] { (void)cublas_api(); });  // its EnvironmentError is kept for the first use
  });
  try {
    init_driver(options.allow_jit_cache);
    if (options.device < 0 || options.device >= device_count()) {
      throw EnvironmentError(fmt::format("no CUDA device {}", options.device));
    }
    PrimaryContext probe(options.device);
    probe.make_current();
    const DeviceInfo d = query_device_info(options.device);
    if (d.cc_major != 9) {
      throw EnvironmentError(fmt::format("{} is compute capability {}.{}; the kernel set is built for sm_90 (Hopper)",
                                         d.name, d.cc_major, d.cc_minor));
    }
  } catch (const Fatal& e) {
    send(StartFailure{e.what(), static_cast<int>(e.code())});
    return static_cast<int>(e.code());
  } catch (const Error& e) {
    send(StartFailure{e.what(), 3});
    return 3;
  }
  Worker worker(options, sets.get());
  return worker.loop();
}

}  // namespace lp::worker
