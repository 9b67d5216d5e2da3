#pragma once
// The Triton launch ABI, driven by the manifest: each PTX parameter is filled by
// name from the case's tensors and sizes (kernels/README.md "Runtime arguments"),
// the grid is evaluated from the manifest's factors, and every specialisation the
// variant was compiled with is checked against the runtime values first: a case
// that breaks one is refused with the reason, never launched.

#include <cstdint>
#include <string>
#include <vector>

#include "cuda/memory.hpp"
#include "cuda/module.hpp"
#include "cuda/stream.hpp"
#include "kernels/manifest.hpp"
#include "util/error.hpp"
#include "verify/case_buffers.hpp"
#include "families/device.hpp"
#include "model/problem.hpp"

namespace lp::worker {

using lp::AbiViolation;  // families/device.hpp

/// Everything one launch needs, built once per case and reused for every repeat:
/// parameter storage, device arrays of per-slice pointers/strides, scratch.
class PreparedLaunch {
 public:
  /// Fills the variant's parameters for `kernel` (the single-kernel family whose
  /// kernel this launch is: families/family.hpp KernelLaunch) of `problem` on `buffers`. Throws
  /// AbiViolation when a runtime value breaks the variant's specialisation (not
  /// divisible by 16, misaligned, not 1, beyond int32) or the variant's constexprs
  /// disagree with the problem (SLICE_NUM, EVEN_K, ADD_INPUTS, dtypes).
  /// Per-slice arrays are uploaded on `stream` (synchronously).
  PreparedLaunch(const kernels::Variant& variant, Op kernel, const Problem& problem,
                 const LoraMetadata& metadata, CaseBuffers& buffers, const Stream& stream);

  /// Launches on `stream` (asynchronous) with function `fn` from the variant's module;
  /// `programmatic`: with programmatic dependent launch (launch_kernel_programmatic).
  void launch(CUfunction fn, const Stream& stream, bool programmatic = false);

  /// Grid, block and dynamic shared memory.
  [[nodiscard]] const LaunchConfig& config() const noexcept { return m_config; }

 private:
  /// The grid and block from the manifest's factors; the number of programs.
  std::int64_t set_grid(const kernels::Variant& v, const LaunchInputs& in);
  /// A pointer parameter's value (per-slice arrays uploaded and kept in m_arrays).
  CUdeviceptr pointer_argument(const kernels::Variant& v, const kernels::Param& param, const LaunchValue& value,
                               const Stream& stream);
  /// A scalar parameter's bytes, checked against its type and specialisation.
  static void store_scalar(const kernels::Variant& v, const kernels::Param& param, const LaunchValue& value,
                           std::uint64_t& slot);

  LaunchConfig m_config;
  std::vector<std::uint64_t> m_storage;  ///< one 8-byte slot per parameter (u32/f32 use the low bytes)
  std::vector<void*> m_args;
  std::vector<DeviceBuffer> m_arrays;    ///< per-slice pointer/stride arrays, scratch
};

}  // namespace lp::worker
