// Device side of reference_kernels.hpp: plain grid-stride element loops.

#include "verify/reference_kernels.hpp"

#include <algorithm>

#include "cuda/check.hpp"

namespace lp::reference_detail {
namespace {

constexpr int k_threads = 256;

unsigned blocks_for(std::int64_t count) {
  const std::int64_t wanted = (count + k_threads - 1) / k_threads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(wanted, 1, 8192));
}

__global__ void gather_rows_kernel(const void* src, DType t, std::int64_t src_stride, const std::int32_t* rows,
                                   std::int64_t row_divisor, std::int64_t n_rows, std::int64_t width, void* dst) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t col = i - row * width;
    const auto from = static_cast<std::size_t>(rows[row] / row_divisor * src_stride + col);
    store_bits(t, dst, static_cast<std::size_t>(i), load_bits(t, src, from));
  }
}

__global__ void finish_expand_kernel(const float* acc, std::int64_t n_rows, std::int64_t width,
                                     const std::int32_t* rows, DType w, bool add_inputs, const void* y_in, void* y,
                                     std::int64_t row_stride, std::int64_t offset) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t n = i - row * width;
    const auto at = static_cast<std::size_t>(rows[row] * row_stride + offset + n);
    std::uint32_t bits = float_to_bits(w, acc[i]);
    if (add_inputs) {
      // docs/problem.md: the sum of two W values computed in fp32, then rounded.
      const float sum = bits_to_float(w, bits) + bits_to_float(w, load_bits(w, y_in, at));
      bits = float_to_bits(w, sum);
    }
    store_bits(w, y, at, bits);
  }
}

__global__ void scale_rows_kernel(float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows,
                                  const float* weights) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    acc[i] *= weights[rows[i / width]];
  }
}

__global__ void scatter_rows_kernel(const float* acc, std::int64_t n_rows, std::int64_t width,
                                    const std::int32_t* rows, float* out) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t col = i - row * width;
    out[rows[row] * width + col] = acc[i];
  }
}

}  // namespace

void gather_rows(const void* src, DType t, std::int64_t src_stride, const std::int32_t* rows, std::int64_t n_rows,
                 std::int64_t width, void* dst, const Stream& stream, std::int64_t row_divisor) {
  if (n_rows * width == 0) {
    return;
  }
  gather_rows_kernel<<<blocks_for(n_rows * width), k_threads, 0, stream.runtime()>>>(src, t, src_stride, rows,
                                                                                      row_divisor, n_rows, width, dst);
  LP_CUDA_CHECK(cudaGetLastError());
}

void finish_expand(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, DType w,
                   bool add_inputs, const void* y_in, void* y, std::int64_t row_stride, std::int64_t offset,
                   const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  finish_expand_kernel<<<blocks_for(n_rows * width), k_threads, 0, stream.runtime()>>>(
      acc, n_rows, width, rows, w, add_inputs, y_in, y, row_stride, offset);
  LP_CUDA_CHECK(cudaGetLastError());
}

void scale_rows(float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, const float* weights,
                const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  scale_rows_kernel<<<blocks_for(n_rows * width), k_threads, 0, stream.runtime()>>>(acc, n_rows, width, rows, weights);
  LP_CUDA_CHECK(cudaGetLastError());
}

void scatter_rows_f32(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, float* out,
                      const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  scatter_rows_kernel<<<blocks_for(n_rows * width), k_threads, 0, stream.runtime()>>>(acc, n_rows, width, rows, out);
  LP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lp::reference_detail
