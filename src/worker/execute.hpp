#pragma once
// Runs one job on the GPU inside a worker: builds the case's tensors from the
// seed, computes the cuBLAS reference, launches the Triton kernel(s) through the
// manifest's ABI `repeats` times with fresh poison, and compares each run on the
// device. Everything here needs a CUDA context: only workers call it.

#include <map>
#include <memory>
#include <string>

#include "cuda/cublas.hpp"
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

/// Runs `job`. Returns status "ran" with metrics, "skipped" (ABI violation, not
/// enough free memory, missing image) or "incomplete" (a recoverable CUDA or
/// reference error). Throws StickyCudaError when the context is dead: the caller
/// reports the fault and must stop using this context.
protocol::JobResult execute_job(const protocol::Job& job, const ImageTable& images, const CublasHandle& cublas, const Stream& stream);

}  // namespace lp::worker
