#include "verify/reference.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/memory.hpp"
#include "util/error.hpp"
#include "verify/inputs.hpp"
#include "verify/poison.hpp"
#include "verify/reference_kernels.hpp"

namespace lp {
namespace {

using reference_detail::finish_expand;
using reference_detail::gather_rows;
using reference_detail::scale_rows;
using reference_detail::scatter_rows_f32;

int as_int(std::int64_t value, const char* what) {
  if (value < 0 || value > INT_MAX) {
    throw Error(fmt::format("reference: {} = {} does not fit cuBLAS's int dimensions", what, value));
  }
  return static_cast<int>(value);
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::f16:
      return CUDA_R_16F;
  }
  throw Error("reference: unknown dtype");
}

template <class T>
T* typed(const DeviceBuffer& b) {
  return static_cast<T*>(b.raw());
}

const void* element_at(const DeviceBuffer& b, std::size_t index, DType t) {
  return static_cast<const char*>(b.raw()) + index * dtype_size(t);
}

// Row-major c[rows, cols] (fp32) = alpha * a[rows, k] * b[cols, k]^T, a and b of
// dtype t. In cuBLAS's column-major terms c^T = b * a^T: op(b) = T with ld k,
// op(a) = N with ld k, ldc = cols.
void gemm_abt(const CublasHandle& cublas, std::int64_t rows, std::int64_t cols, std::int64_t k, DType t, const void* a,
              const void* b, float alpha, float* c) {
  const float beta = 0.0f;
  const cudaDataType_t type = cuda_type(t);
  LP_CUBLAS_CHECK(cublas_api().gemm_ex(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N, as_int(cols, "GEMM columns"),
                               as_int(rows, "GEMM rows"), as_int(k, "GEMM K"), &alpha, b, type, as_int(k, "lda"), a,
                               type, as_int(k, "ldb"), &beta, c, CUDA_R_32F, as_int(cols, "ldc"), CUBLAS_COMPUTE_32F,
                               CUBLAS_GEMM_DEFAULT));
}

// The tokens of LoRA lora_ids[j]: a device pointer into the sorted token indices.
const std::int32_t* tokens_of(const CaseBuffers& b, const LoraMetadata& m, std::size_t j) {
  return typed<const std::int32_t>(b.token_indices_sorted_by_lora_ids) + m.lora_token_start_loc[j];
}

std::int64_t largest_group(const LoraMetadata& m) {
  std::int64_t largest = 0;
  for (std::size_t j = 0; j < m.lora_ids.size(); ++j) {
    if (m.lora_ids[j] >= 0) {
      largest = std::max<std::int64_t>(largest, m.num_tokens_per_lora[j]);
    }
  }
  return largest;
}

// Every scratch buffer of one reference, allocated before the timed part so the
// cuBLAS time is GPU work only (no cuMemAlloc in between), and freed only after the
// stream has drained.
struct Workspace {
  DeviceBuffer gathered_x;    // [largest group, H_in] X (shrink)
  DeviceBuffer shrink_acc;    // [largest group, R] fp32 (shrink)
  DeviceBuffer intermediate;  // [S, T, R] fp32 (lora_linear's buf)
  DeviceBuffer cast;          // [S, T, R] W: cast_W of expand's input (when I != W)
  DeviceBuffer gathered_a;    // [largest group, R] W (expand)
  DeviceBuffer expand_acc;    // [largest group, widest slice] fp32 (expand)
  DeviceBuffer shrink_w;      // [largest group, R] W: fused_moe's rank tile, rounded
};

std::int64_t largest_group(const MoeRouting& routing) {
  std::int64_t largest = 0;
  for (const MoeRouting::Group& g : routing.groups) {
    largest = std::max(largest, g.count);
  }
  return largest;
}

Workspace make_workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers& buffers, const Stream& stream) {
  Workspace w;
  const std::int64_t largest = largest_group(m);
  const auto sizes = [](std::int64_t a, std::int64_t b, std::size_t element) {
    return static_cast<std::size_t>(a * b) * element;
  };
  if (p.op == Op::fused_moe) {
    const std::int64_t pairs = largest_group(buffers.routing);
    const DType w_type = p.weight_dtype;
    w.gathered_x = DeviceBuffer(sizes(pairs, p.hidden_in, dtype_size(w_type)), stream);
    w.shrink_acc = DeviceBuffer(sizes(pairs, p.rank, sizeof(float)), stream);
    w.shrink_w = DeviceBuffer(sizes(pairs, p.rank, dtype_size(w_type)), stream);
    w.expand_acc = DeviceBuffer(sizes(pairs, p.slice_hidden.at(0), sizeof(float)), stream);
    return w;
  }
  if (p.op != Op::expand) {
    w.gathered_x = DeviceBuffer(sizes(largest, p.hidden_in, dtype_size(p.input_dtype)), stream);
    w.shrink_acc = DeviceBuffer(sizes(largest, p.rank, sizeof(float)), stream);
  }
  if (p.op == Op::lora_linear) {
    w.intermediate = DeviceBuffer(sizes(p.num_slices() * p.num_tokens, p.rank, sizeof(float)), stream);
  }
  if (p.op != Op::shrink) {
    const DType w_type = p.weight_dtype;
    if (p.expand_input_dtype() != w_type) {
      w.cast = DeviceBuffer(sizes(p.num_slices() * p.num_tokens, p.rank, dtype_size(w_type)), stream);
    }
    const std::int64_t widest = *std::max_element(p.slice_hidden.begin(), p.slice_hidden.end());
    w.gathered_a = DeviceBuffer(sizes(largest, p.rank, dtype_size(w_type)), stream);
    w.expand_acc = DeviceBuffer(sizes(largest, widest, sizeof(float)), stream);
  }
  return w;
}

// buf_out [S, T, R] fp32: rows of live tokens = scale * x A_s^T; other rows untouched.
void reference_shrink(const Problem& p, const LoraMetadata& m, const CaseBuffers& b, Workspace& w, float* buf_out,
                      const Stream& stream, const CublasHandle& cublas) {
  const DType x_type = p.input_dtype;
  const std::int64_t t = p.num_tokens;
  const std::int64_t r = p.rank;
  const std::int64_t h = p.hidden_in;
  for (std::size_t j = 0; j < m.lora_ids.size(); ++j) {
    const std::int32_t lora = m.lora_ids[j];
    const std::int64_t n = m.num_tokens_per_lora[j];
    if (lora < 0) {
      continue;
    }
    gather_rows(b.x.raw(), x_type, h, tokens_of(b, m, j), n, h, w.gathered_x.raw(), stream);
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      const void* a_weights =
          element_at(b.lora_a[static_cast<std::size_t>(s)], static_cast<std::size_t>(lora * r * h), x_type);
      gemm_abt(cublas, n, r, h, x_type, w.gathered_x.raw(), a_weights, p.scale, typed<float>(w.shrink_acc));
      scatter_rows_f32(typed<float>(w.shrink_acc), n, r, tokens_of(b, m, j), buf_out + s * t * r, stream);
    }
  }
}

// y [T, H_tot] in W: rows of live tokens from `in` [S, T, R] (dtype in_type), cast to W first.
void reference_expand(const Problem& p, const LoraMetadata& m, const CaseBuffers& b, Workspace& w, const void* in,
                      DType in_type, DeviceBuffer& y, const Stream& stream, const CublasHandle& cublas) {
  const DType w_type = p.weight_dtype;
  const std::int64_t t = p.num_tokens;
  const std::int64_t r = p.rank;
  const std::int64_t h_tot = p.hidden_total();
  const std::vector<std::int64_t> offsets = p.slice_offsets();

  // The kernel's CAST_TYPE: the A operand is cast_W(buf), rounded to nearest even.
  const void* operand = in;
  if (in_type != w_type) {
    convert_on_device(in, in_type, w.cast.raw(), w_type, static_cast<std::size_t>(p.num_slices() * t * r), stream);
    operand = w.cast.raw();
  }
  for (std::size_t j = 0; j < m.lora_ids.size(); ++j) {
    const std::int32_t lora = m.lora_ids[j];
    const std::int64_t n = m.num_tokens_per_lora[j];
    if (lora < 0) {
      continue;
    }
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      const std::int64_t h = p.slice_hidden[static_cast<std::size_t>(s)];
      const void* slice_in =
          static_cast<const char*>(operand) + static_cast<std::size_t>(s * t * r) * dtype_size(w_type);
      gather_rows(slice_in, w_type, r, tokens_of(b, m, j), n, r, w.gathered_a.raw(), stream);
      const void* b_weights =
          element_at(b.lora_b[static_cast<std::size_t>(s)], static_cast<std::size_t>(lora * h * r), w_type);
      gemm_abt(cublas, n, h, r, w_type, w.gathered_a.raw(), b_weights, 1.0f, typed<float>(w.expand_acc));
      finish_expand(typed<float>(w.expand_acc), n, h, tokens_of(b, m, j), w_type, p.add_inputs, b.y_in.raw(), y.raw(),
                    h_tot, offsets[static_cast<std::size_t>(s)], stream);
    }
  }
}

// fused_moe (docs/problem.md "Fused-MoE LoRA"), one (adapter, expert) group at a time:
// gather its pairs' x rows, tmp = x A_e^T in fp32, round tmp to W (the kernel's
// rank tile), acc = tmp B_e^T in fp32, times the routing weight (down), then the
// expand's finishing into the pairs' output rows.
void reference_fused_moe(const Problem& p, const CaseBuffers& b, Workspace& w, const Stream& stream,
                         const CublasHandle& cublas) {
  const DType w_type = p.weight_dtype;
  const std::int64_t r = p.rank;
  const std::int64_t k = p.hidden_in;
  const std::int64_t n = p.slice_hidden.at(0);
  const std::int64_t e = p.moe.num_experts;
  const std::int64_t row_divisor = p.moe.mul_routed_weight ? 1 : p.moe.top_k;
  const std::int64_t row_stride = p.num_slices() * n;
  for (const MoeRouting::Group& g : b.routing.groups) {
    const std::int32_t* pairs = typed<const std::int32_t>(b.group_pairs) + g.begin;
    gather_rows(b.x.raw(), w_type, k, pairs, g.count, k, w.gathered_x.raw(), stream, row_divisor);
    const std::int64_t weights = static_cast<std::int64_t>(g.lora) * e + g.expert;  // [L, E] index
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      const auto slice = static_cast<std::size_t>(s);
      const void* a_weights = element_at(b.lora_a[slice], static_cast<std::size_t>(weights * r * k), w_type);
      gemm_abt(cublas, g.count, r, k, w_type, w.gathered_x.raw(), a_weights, 1.0f, typed<float>(w.shrink_acc));
      convert_on_device(w.shrink_acc.raw(), DType::f32, w.shrink_w.raw(), w_type,
                        static_cast<std::size_t>(g.count * r), stream);
      const void* b_weights = element_at(b.lora_b[slice], static_cast<std::size_t>(weights * n * r), w_type);
      gemm_abt(cublas, g.count, n, r, w_type, w.shrink_w.raw(), b_weights, 1.0f, typed<float>(w.expand_acc));
      if (p.moe.mul_routed_weight) {
        scale_rows(typed<float>(w.expand_acc), g.count, n, pairs, typed<const float>(b.topk_weights), stream);
      }
      finish_expand(typed<float>(w.expand_acc), g.count, n, pairs, w_type, p.add_inputs, b.y_in.raw(),
                    b.reference.raw(), row_stride, s * n, stream);
    }
  }
}

// The reference starts as the output does before a launch, so rows of tokens
// without a LoRA compare against exactly that.
void init_reference(const Problem& p, CaseBuffers& b, const Stream& stream) {
  switch (output_init(p)) {
    case OutputInit::poison:
      if (p.output_dtype() == DType::f32) {
        b.reference.fill_u32(poison_bits(DType::f32), stream);
      } else {
        b.reference.fill_u16(static_cast<std::uint16_t>(poison_bits(p.output_dtype())), stream);
      }
      break;
    case OutputInit::y_in:
      b.reference.copy_from(b.y_in, stream);
      break;
    case OutputInit::zero:
      b.reference.fill_u32(0, stream);
      break;
  }
}

}  // namespace

void enqueue_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                       const CublasHandle& cublas, const Stream& stream, GpuSpan& span) {
  validate(problem);
  if (cublas.stream() != stream.get()) {
    throw Error("compute_reference: the cuBLAS handle is bound to another stream");
  }
  // Stream-ordered: freed after the work queued here, however this returns.
  Workspace workspace = make_workspace(problem, metadata, buffers, stream);
  span.time(stream, [&] {
    init_reference(problem, buffers, stream);
    switch (problem.op) {
      case Op::shrink:
        reference_shrink(problem, metadata, buffers, workspace, typed<float>(buffers.reference), stream, cublas);
        break;
      case Op::expand:
        reference_expand(problem, metadata, buffers, workspace, buffers.buf.raw(), problem.input_dtype,
                         buffers.reference, stream, cublas);
        break;
      case Op::fused_moe:
        reference_fused_moe(problem, buffers, workspace, stream, cublas);
        break;
      case Op::lora_linear:
        // Rows of tokens without a LoRA stay unset in the intermediate: the expand never reads them.
        reference_shrink(problem, metadata, buffers, workspace, typed<float>(workspace.intermediate), stream, cublas);
        reference_expand(problem, metadata, buffers, workspace, workspace.intermediate.raw(), DType::f32,
                         buffers.reference, stream, cublas);
        break;
    }
  });
}

double compute_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                         const CublasHandle& cublas, const Stream& stream) {
  GpuSpan span;
  enqueue_reference(problem, metadata, buffers, cublas, stream, span);
  return span.ms();
}

}  // namespace lp
