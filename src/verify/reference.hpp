#pragma once
// The cuBLAS reference of docs/problem.md. Per LoRA in use and per slice: gather
// the rows of the LoRA's tokens (token_indices_sorted_by_lora_ids), one
// cublasGemmEx with CUBLAS_COMPUTE_32F on a pedantic-math handle (never TF32, no
// reduced-precision reductions), fp32 output, then the kernel's own finishing:
//   expand:      cast_W(buf) first (the operand the kernel's CAST_TYPE path sees),
//                y = round_W(acc), or round_W(round_W(acc) + y_in) with ADD_INPUTS;
//   shrink:      buf = scale * acc in fp32 (alpha = scale), no further rounding;
//   lora_linear: the shrink above into an fp32 buf, then the expand with I = fp32.
//   fused_moe:   per (adapter, expert) group of routed pairs instead of per LoRA: the
//                shrink, its result rounded to W, the expand, times the routing weight
//                for the down projection, then the expand's finishing into the pairs' rows.
// Rows of tokens without a LoRA hold exactly what the output held before the
// launch (poison, y_in or zero: reset_output()), so any write there shows.

#include "cuda/cublas.hpp"
#include "cuda/stream.hpp"
#include "verify/case_buffers.hpp"
#include "model/problem.hpp"

namespace lp {

/// Writes the expected output into buffers.reference from the generated inputs in
/// `buffers` (independent of the output buffer, so it may run before or after the
/// kernel). `cublas` must be bound to `stream`. Synchronises `stream` and returns
/// the CUDA-event time in ms of the reference's GPU work (casts, gathers, GEMMs;
/// scratch buffers are allocated before the timed part).
/// Throws lp::Error for an invalid problem or a dimension beyond cuBLAS's int range,
/// lp::CudaError when a call fails.
double compute_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                         const CublasHandle& cublas, const Stream& stream);

/// compute_reference without the wait: the reference's work queued on `stream`
/// between `span`'s events (span.ms() waits for it and gives its time).
void enqueue_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                       const CublasHandle& cublas, const Stream& stream, GpuSpan& span);

}  // namespace lp
