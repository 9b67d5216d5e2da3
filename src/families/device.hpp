#pragma once
// The device half of a kernel family (family.hpp is its host half): its buffers and
// seeded inputs, its cuBLAS reference, and, for a family that is one kernel, that
// kernel's launch arguments and the constexprs a variant must agree with. Built into
// lp_families_device, which only the worker links: the sweep's parent never creates
// a CUDA context. Every device half is registered once, in device_registry.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cuda/cublas.hpp"
#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "families/family.hpp"
#include "kernels/manifest.hpp"
#include "verify/case_buffers.hpp"
#include "verify/compare.hpp"
#include "util/error.hpp"
#include "verify/reference.hpp"

namespace lp {

/// A case that must not be launched with a variant: the argument and the reason
/// (the worker answers the case as refused, never launched).
class AbiViolation : public Error {
 public:
  using Error::Error;
};

/// A runtime argument's value before the launcher checks it against the manifest.
namespace launch_value {
struct Integer {
  std::int64_t value;
};
struct Float {
  float value;
};
struct Pointer {
  CUdeviceptr value;
  DType dtype;  ///< element type the tensor holds (index arrays: any; they are checked by name)
};
struct U64Array {
  std::vector<std::uint64_t> values;  ///< device addresses or offsets
};
struct I64Array {
  std::vector<std::int64_t> values;  ///< per-slice strides or widths
};
}  // namespace launch_value
using LaunchValue = std::variant<launch_value::Integer, launch_value::Float, launch_value::Pointer,
                                 launch_value::U64Array, launch_value::I64Array>;

/// What a kernel's arguments are made of.
struct LaunchInputs {
  const Problem& problem;
  const LoraMetadata& metadata;
  CaseBuffers& buffers;
};

class DeviceFamily {
 public:
  virtual ~DeviceFamily() = default;

  /// Allocates the family's tensors, generates its inputs from problem.seed
  /// (verify/inputs.hpp) and uploads the mapping. The output is left unset.
  [[nodiscard]] virtual CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                                 const Stream& stream) const = 0;
  /// Puts what the kernels write in its pre-launch state (the output; lora_linear
  /// also its intermediate buf).
  virtual void reset_output(const Problem& p, CaseBuffers& b, const Stream& stream) const;
  /// The reference's scratch, allocated before its timed part.
  [[nodiscard]] virtual Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers& b,
                                            const Stream& stream) const = 0;
  /// Queues the expected output into b.reference (set to what the output holds
  /// before a launch, so rows of tokens without a LoRA compare against exactly that).
  virtual void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w,
                         const CublasHandle& cublas, const Stream& stream) const = 0;

  /// A one-kernel family's argument `name` (`pointer_form`: the variant takes it as a
  /// pointer, a per-slice array); nullopt for a name it does not know.
  [[nodiscard]] virtual std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                            bool pointer_form) const;
  /// A grid quantity only this family has ("padded_pairs"); nullopt otherwise.
  [[nodiscard]] virtual std::optional<std::int64_t> grid_quantity(const LaunchInputs& in,
                                                                  const std::string& name) const;
  /// Throws AbiViolation when the variant's constexprs disagree with the problem.
  virtual void check_variant(const kernels::Variant& v, const Problem& p) const;
};

/// The device half of `op`'s family.
[[nodiscard]] const DeviceFamily& device_family_of(Op op) noexcept;

/// The tensor the comparison checks (buf where the family writes buf, y otherwise),
/// and the adapter of each of its rows (pair_lora where the family routes pairs).
[[nodiscard]] DeviceBuffer& output_of(const Problem& problem, CaseBuffers& buffers) noexcept;
[[nodiscard]] const DeviceBuffer& row_lora_of(const Problem& problem, const CaseBuffers& buffers) noexcept;
/// The layout of the problem's output: buf [S, T, R], or y (fused_moe: one row per pair).
[[nodiscard]] CompareLayout compare_layout(const Problem& problem);
/// Puts the output in its pre-launch state (output_init()): poison, a copy of y_in or
/// zeros. Asynchronous on `stream`.
void reset_output_tensor(const Problem& p, CaseBuffers& b, const Stream& stream);

/// Allocates every tensor of `problem`, uploads the mapping metadata and generates
/// the inputs. Outputs are left unset: call reset_output() before each launch.
/// Everything is queued on `stream` and the buffers are stream-ordered there (they
/// must die before it). Throws lp::Error for an invalid problem or metadata not
/// built from its lora_of, lp::CudaError on allocation/launch failure.
[[nodiscard]] CaseBuffers make_case_buffers(const Problem& problem, const LoraMetadata& metadata,
                                            const Stream& stream);

/// Puts the output (and lora_linear's intermediate buf) in its pre-launch state.
/// Call before every launch, so each repeat starts fresh. Asynchronous on `stream`.
void reset_output(const Problem& problem, CaseBuffers& buffers, const Stream& stream);

/// Writes the expected output into buffers.reference from the generated inputs
/// (independent of the output buffer, so it may run before or after the kernel),
/// queued on `stream` between `span`'s events (span.ms() waits for it and gives its
/// time). `cublas` must be bound to `stream`. Throws lp::Error for an invalid problem
/// or a dimension beyond cuBLAS's int range, lp::CudaError when a call fails.
void enqueue_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                       const CublasHandle& cublas, const Stream& stream, GpuSpan& span);
/// enqueue_reference, then waits: the CUDA-event time in ms of its GPU work.
double compute_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                         const CublasHandle& cublas, const Stream& stream);

}  // namespace lp
