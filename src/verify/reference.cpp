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

using reference_detail::finish_expand;
using reference_detail::gather_rows;
using reference_detail::scale_rows;
using reference_detail::scatter_rows_f32;

namespace {

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
    case DType::e4m3:
      break;  // the FP8 families' references run on dequantized copies
  }
  throw Error(fmt::format("reference: no GEMM in {}", dtype_name(t)));
}

}  // namespace

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

namespace {

// The tokens of LoRA lora_ids[j]: a device pointer into the sorted token indices.
const std::int32_t* tokens_of(const CaseBuffers& b, const LoraMetadata& m, std::size_t j) {
  return typed<const std::int32_t>(b.token_indices_sorted_by_lora_ids) + m.lora_token_start_loc[j];
}

}  // namespace

std::size_t workspace_bytes(std::int64_t rows, std::int64_t cols, std::size_t element) {
  return static_cast<std::size_t>(rows * cols) * element;
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

void add_shrink_workspace(Workspace& w, const Problem& p, const LoraMetadata& m, const Stream& stream) {
  const std::int64_t largest = largest_group(m);
  w.gathered_x = DeviceBuffer(workspace_bytes(largest, p.hidden_in, dtype_size(p.input_dtype)), stream);
  w.shrink_acc = DeviceBuffer(workspace_bytes(largest, p.rank, sizeof(float)), stream);
}

void add_expand_workspace(Workspace& w, const Problem& p, const LoraMetadata& m, DType a_dtype, const Stream& stream) {
  const std::int64_t largest = largest_group(m);
  const DType w_type = p.weight_dtype;
  if (a_dtype != w_type) {
    w.cast = DeviceBuffer(workspace_bytes(p.num_slices() * p.num_tokens, p.rank, dtype_size(w_type)), stream);
  }
  const std::int64_t widest = *std::max_element(p.slice_hidden.begin(), p.slice_hidden.end());
  w.gathered_a = DeviceBuffer(workspace_bytes(largest, p.rank, dtype_size(w_type)), stream);
  w.expand_acc = DeviceBuffer(workspace_bytes(largest, widest, sizeof(float)), stream);
}

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

}  // namespace lp
