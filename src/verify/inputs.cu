// Device side of input generation and dtype conversion (see inputs.hpp).

#include <algorithm>

#include "cuda/check.hpp"
#include "verify/device_launchers.hpp"

namespace lp::device_launch {
namespace {

constexpr int k_threads = 256;

// Enough blocks to fill an H200 several times over; grid-stride loops do the rest,
// and the values do not depend on how the work is split.
unsigned blocks_for(std::size_t count) {
  const std::size_t wanted = (count + k_threads - 1) / k_threads;
  return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, 4096));
}

__global__ void fill_generated_kernel(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                                      std::uint32_t tensor) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store_bits(t, dst, i, generated_bits(t, range, seed, tensor, i));
  }
}

__global__ void convert_kernel(const void* src, DType from, void* dst, DType to, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store_bits(to, dst, i, float_to_bits(to, bits_to_float(from, load_bits(from, src, i))));
  }
}

}  // namespace

void fill_generated(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                    std::uint32_t tensor, cudaStream_t stream) {
  if (count == 0) {
    return;
  }
  fill_generated_kernel<<<blocks_for(count), k_threads, 0, stream>>>(dst, t, count, range, seed, tensor);
  LP_CUDA_CHECK(cudaGetLastError());
}

void convert(const void* src, DType from, void* dst, DType to, std::size_t count, cudaStream_t stream) {
  if (count == 0) {
    return;
  }
  convert_kernel<<<blocks_for(count), k_threads, 0, stream>>>(src, from, dst, to, count);
  LP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lp::device_launch
