#pragma once
// The small device kernels around the reference GEMMs (reference.cpp): row gathers
// by token index and the per-token finishing steps of docs/problem.md. Internal
// to src/verify. All are asynchronous on `stream` and throw lp::CudaError when the
// launch fails.

#include <cstdint>

#include "cuda/stream.hpp"
#include "model/dtype.hpp"

namespace lp::reference_detail {

/// dst[i, :] = src[rows[i] / row_divisor, :] for i < n_rows: `width` elements of `t`
/// per row, rows of src `src_stride` elements apart, dst dense. `rows` is a device
/// int32 array (fused_moe's gate/up reads x row pair / top_k: row_divisor top_k).
void gather_rows(const void* src, DType t, std::int64_t src_stride, const std::int32_t* rows, std::int64_t n_rows,
                 std::int64_t width, void* dst, const Stream& stream, std::int64_t row_divisor = 1);

/// acc[i, :] *= weights[rows[i]] for i < n_rows (fp32, `width` per row): fused_moe's
/// MUL_ROUTED_WEIGHT, before the output rounding as in the kernel.
void scale_rows(float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, const float* weights,
                const Stream& stream);

/// For i < n_rows, n < width, t = rows[i]:
///   y[t, offset + n] = round_W(acc[i, n])                         (no ADD_INPUTS)
///   y[t, offset + n] = round_W(round_W(acc[i, n]) + y_in[t, offset + n])  (ADD_INPUTS, sum in fp32)
/// acc is dense fp32 [n_rows, width]; y and y_in are [T, row_stride] of `w`.
void finish_expand(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, DType w,
                   bool add_inputs, const void* y_in, void* y, std::int64_t row_stride, std::int64_t offset,
                   const Stream& stream);

/// out[t, :] = acc[i, :] for i < n_rows, t = rows[i]: fp32 rows of `width` (= R).
void scatter_rows_f32(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, float* out,
                      const Stream& stream);

}  // namespace lp::reference_detail
