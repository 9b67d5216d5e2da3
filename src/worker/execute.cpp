#include "worker/execute.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "worker/launch.hpp"
#include "verify/case_buffers.hpp"
#include "verify/compare.hpp"
#include "verify/reference.hpp"
#include "verify/stats.hpp"
#include "util/checked.hpp"
#include "model/tolerance.hpp"

namespace lp::worker {

using nlohmann::json;
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

const LoadedImage& image_for(const ImageTable& images, const std::optional<ImageRef>& ref, const char* what) {
  if (!ref) {
    throw AbiViolation(fmt::format("the job has no {} kernel", what));
  }
  const auto it = images.find(ref->key);
  if (it == images.end()) {
    throw AbiViolation(fmt::format("image {} was not loaded into this worker", ref->key));
  }
  return it->second;
}

std::uint64_t free_device_bytes() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  LP_CU_CHECK(driver().cuMemGetInfo(&free_bytes, &total_bytes));
  return free_bytes;
}

}  // namespace

std::uint64_t estimate_device_bytes(const Problem& p) {
  // Saturating: a product too large for 64 bits is "more than any GPU has", never a small wrapped number.
  const auto mul = [](std::initializer_list<std::uint64_t> factors) {
    std::uint64_t out = 1;
    for (std::uint64_t f : factors) {
      out = saturating_mul(out, f);
    }
    return out;
  };
  const auto sum = [](std::initializer_list<std::uint64_t> terms) {
    std::uint64_t out = 0;
    for (std::uint64_t t : terms) {
      out = saturating_add(out, t);
    }
    return out;
  };
  const auto u = [](std::int64_t v) { return v > 0 ? static_cast<std::uint64_t>(v) : std::uint64_t{0}; };
  const std::uint64_t T = u(p.num_tokens);
  const std::uint64_t R = u(p.rank);
  const std::uint64_t S = static_cast<std::uint64_t>(p.num_slices());
  const std::uint64_t L = u(p.num_loras);
  const std::uint64_t w = dtype_size(p.weight_dtype);
  std::uint64_t h_tot = 0;
  for (std::int64_t h : p.slice_hidden) {
    h_tot = saturating_add(h_tot, u(h));
  }
  const std::uint64_t h_in = u(p.hidden_in);
  std::uint64_t bytes = 0;
  if (p.op != Op::expand) {
    bytes = sum({bytes, mul({T, h_in, w}), mul({S, L, R, h_in, w})});  // x, A
  }
  bytes = sum({bytes, mul({S, T, R, 4})});  // buf (fp32 at most)
  if (p.op != Op::shrink) {
    bytes = sum({bytes, mul({L, h_tot, R, w}), mul({3, T, h_tot, w})});  // B; y, y_in, reference
  } else {
    bytes = sum({bytes, mul({S, T, R, 4})});  // reference
  }
  bytes = sum({bytes, mul({4, T, 4})});  // mapping metadata
  // The reference gathers and casts operands into scratch of about the same size.
  return sum({mul({2, bytes}), std::uint64_t{64} << 20});
}

JobResult execute_job(const Job& job, const ImageTable& images, const CublasHandle& cublas, const Stream& stream) {
  JobResult result;
  result.index = job.index;
  result.case_id = job.case_id;
  Problem problem = job.problem;
  try {
    problem.lora_of = make_token_mapping(problem.num_tokens, problem.num_loras, problem.seed);
    validate(problem);
    const std::uint64_t needed = estimate_device_bytes(problem);
    std::uint64_t available = free_device_bytes();
    if (needed > available) {
      // What earlier cases freed is kept by the memory pool, not counted as free: hand it back first.
      release_kept_device_memory(stream);
      available = free_device_bytes();
    }
    if (needed > available) {
      result.outcome = RunOutcome::refused;
      result.reason = fmt::format("out of memory: case {} needs about {:.1f} GiB, {:.1f} GiB free", job.case_id,
                                  static_cast<double>(needed) / (1 << 30), static_cast<double>(available) / (1 << 30));
      return result;
    }
    const LoraMetadata metadata = build_lora_metadata(problem.lora_of, problem.num_loras);
    // Everything below is queued on the stream, with stream-ordered buffers, and
    // waited for once, when the comparisons are collected (a fault surfaces there).
    CaseBuffers buffers = make_case_buffers(problem, metadata, stream);
    const StreamDrain drain(stream);  // an exception in between still leaves no work queued

    struct Kernel {
      const LoadedImage* image;
      std::unique_ptr<PreparedLaunch> launch;
    };
    std::vector<Kernel> kernels;  // in launch order: shrink first for lora_linear
    if (problem.op != Op::expand) {
      const LoadedImage& image = image_for(images, job.shrink, "shrink");
      kernels.push_back({&image, std::make_unique<PreparedLaunch>(*image.variant, KernelRole::shrink, problem,
                                                                   metadata, buffers, stream)});
    }
    if (problem.op != Op::shrink) {
      const LoadedImage& image = image_for(images, job.expand, "expand");
      kernels.push_back({&image, std::make_unique<PreparedLaunch>(*image.variant, KernelRole::expand, problem,
                                                                   metadata, buffers, stream)});
    }

    GpuSpan reference_span;
    enqueue_reference(problem, metadata, buffers, cublas, stream, reference_span);
    Tolerance tolerance = tolerance_for(problem);
    CompareSpec spec;
    spec.dtype = problem.output_dtype();
    spec.atol = job.atol.value_or(tolerance.atol);
    spec.rtol = job.rtol.value_or(tolerance.rtol);
    spec.tile = TileShape{job.block_m, job.block_n};
    spec.unwritten_measurable = unwritten_measurable(problem);
    const CompareLayout layout = CompareLayout::for_problem(problem);

    const auto repeats = static_cast<std::size_t>(std::max(job.repeats, 0));
    QueuedComparisons comparisons(layout, spec, repeats, stream);
    std::vector<GpuSpan> runs(repeats);
    for (GpuSpan& run : runs) {
      reset_output(problem, buffers, stream);
      run.time(stream, [&] {
        for (Kernel& k : kernels) {
          k.launch->launch(k.image->function, stream);
        }
      });
      comparisons.enqueue(buffers.output(problem), buffers.reference, buffers.lora_of);
    }
    std::optional<CompareMetrics> worst;
    std::vector<double> kernel_ms;
    const std::vector<CompareMetrics> compared = comparisons.collect();
    for (std::size_t run = 0; run < compared.size(); ++run) {
      const CompareMetrics& m = compared[run];
      kernel_ms.push_back(runs[run].ms());
      ++result.runs;
      if (!m.passed()) {
        ++result.failed_runs;
      }
      if (!worst || worse(m, *worst)) {
        worst = m;
      }
    }
    const double reference_ms = reference_span.ms();
    std::sort(kernel_ms.begin(), kernel_ms.end());
    CaseTiming timing;
    timing.kernel_ms = kernel_ms.empty() ? 0.0 : kernel_ms[kernel_ms.size() / 2];
    timing.reference_ms = reference_ms;
    timing.bytes = compulsory_bytes(problem, metadata);
    result.outcome = RunOutcome::ran;
    worst->tolerance_why = tolerance.describe();
    result.metrics = worst->to_json();
    result.timing = {{"kernel_ms", timing.kernel_ms},
                     {"reference_ms", timing.reference_ms},
                     {"bytes", timing.bytes},
                     {"bandwidth_gb_s", timing.bandwidth_gbps()},
                     {"grid", {kernels.back().launch->config().grid[0], kernels.back().launch->config().grid[1],
                               kernels.back().launch->config().grid[2]}}};
    if (result.failed_runs > 0) {
      result.reason = worst->summary();
    }
    return result;
  } catch (const StickyCudaError&) {
    throw;
  } catch (const AbiViolation& e) {
    result.outcome = RunOutcome::refused;
    result.reason = e.what();
  } catch (const CudaError& e) {
    const bool sticky = (e.api() == CudaApi::driver && is_sticky(static_cast<CUresult>(e.code()))) ||
                        (e.api() == CudaApi::runtime && is_sticky(static_cast<cudaError_t>(e.code())));
    if (sticky) {
      throw StickyCudaError(e.api(), static_cast<CUresult>(e.code()), e.name(), e.what());
    }
    result.outcome = RunOutcome::incomplete;
    result.reason = e.what();
  } catch (const Error& e) {
    result.outcome = RunOutcome::incomplete;
    result.reason = e.what();
  }
  result.metrics = nullptr;
  result.timing = nullptr;
  return result;
}

}  // namespace lp::worker
