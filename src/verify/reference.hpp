#pragma once
// The steps of the cuBLAS reference of docs/problem.md, which each kernel family
// (families/*/..._device.cpp) composes into its own. Per LoRA in use and per slice:
// gather the rows of the LoRA's tokens (token_indices_sorted_by_lora_ids), one
// cublasGemmEx with CUBLAS_COMPUTE_32F on a pedantic-math handle (never TF32, no
// reduced-precision reductions), fp32 output, then the kernel's own finishing:
//   the expand:  cast_W(buf) first (the operand the kernel's CAST_TYPE path sees),
//                y = round_W(acc), or round_W(round_W(acc) + y_in) with ADD_INPUTS;
//   the shrink:  buf = scale * acc in fp32 (alpha = scale), no further rounding.
// Rows of tokens without a LoRA hold exactly what the output held before the
// launch (poison, y_in or zero: the family sets the reference so), so any write there shows.

#include <cstddef>
#include <cstdint>

#include "cuda/cublas.hpp"
#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "verify/case_buffers.hpp"
#include "model/problem.hpp"

namespace lp {

/// Every scratch buffer of one reference, allocated before the timed part so the
/// cuBLAS time is GPU work only (no cuMemAlloc in between), and freed only after the
/// stream has drained. A family allocates the ones its steps use.
struct Workspace {
  DeviceBuffer gathered_x;    ///< [largest group, H_in] X (shrink)
  DeviceBuffer shrink_acc;    ///< [largest group, R] fp32 (shrink)
  DeviceBuffer intermediate;  ///< [S, T, R] fp32 (lora_linear's buf)
  DeviceBuffer cast;          ///< [S, T, R] W: cast_W of expand's input (when I != W)
  DeviceBuffer gathered_a;    ///< [largest group, R] W (expand)
  DeviceBuffer expand_acc;    ///< [largest group, widest slice] fp32 (expand)
  DeviceBuffer shrink_w;      ///< [largest group, R] W: fused_moe's rank tile, rounded
};

/// rows * cols elements of `element` bytes.
[[nodiscard]] std::size_t workspace_bytes(std::int64_t rows, std::int64_t cols, std::size_t element);
/// The most tokens one LoRA in use has.
[[nodiscard]] std::int64_t largest_group(const LoraMetadata& m);
/// The shrink step's scratch, and the expand step's (its cast when A's dtype is not W).
void add_shrink_workspace(Workspace& w, const Problem& p, const LoraMetadata& m, const Stream& stream);
/// `a_dtype`: the dtype the expand casts its A operand from (its family's).
void add_expand_workspace(Workspace& w, const Problem& p, const LoraMetadata& m, DType a_dtype, const Stream& stream);

/// The buffer's element `index` of dtype `t`.
[[nodiscard]] const void* element_at(const DeviceBuffer& b, std::size_t index, DType t);
/// The buffer as a typed device pointer.
template <class T>
[[nodiscard]] T* typed(const DeviceBuffer& b) {
  return static_cast<T*>(b.raw());
}
/// Row-major c[rows, cols] (fp32) = alpha * a[rows, k] * b[cols, k]^T, a and b of
/// dtype t, on `cublas`. Throws lp::Error when a dimension is beyond cuBLAS's int.
void gemm_abt(const CublasHandle& cublas, std::int64_t rows, std::int64_t cols, std::int64_t k, DType t, const void* a,
              const void* b, float alpha, float* c);

/// The shrink step: buf_out [S, T, R] fp32, rows of live tokens = scale * x A_s^T;
/// other rows untouched.
void reference_shrink(const Problem& p, const LoraMetadata& m, const CaseBuffers& b, Workspace& w, float* buf_out,
                      const Stream& stream, const CublasHandle& cublas);
/// The expand step: y [T, H_tot] in W, rows of live tokens from `in` [S, T, R] of
/// dtype `in_type`, cast to W first.
void reference_expand(const Problem& p, const LoraMetadata& m, const CaseBuffers& b, Workspace& w, const void* in,
                      DType in_type, DeviceBuffer& y, const Stream& stream, const CublasHandle& cublas);

}  // namespace lp
