// Device side of cuda_expand.hpp: the kernel and its raw launcher.

#include <string>

#include "cuda_expand_launch.hpp"
#include "util/error.hpp"

namespace lp::device_launch {
namespace {

constexpr int k_threads = 128;

__device__ float a_operand(const ExpandParams& p, std::int64_t slice, std::int64_t token, std::int64_t r) {
  const std::size_t row = static_cast<std::size_t>((slice * p.num_tokens + token) * p.rank);
  if (p.reinterpret_pairs) {
    const std::uint32_t bits = load_bits(DType::f32, p.buf, row + static_cast<std::size_t>(r / 2));
    const std::uint32_t half = (r % 2) == 0 ? (bits & 0xFFFFu) : (bits >> 16);
    return bits_to_float(p.w, half);
  }
  // CAST_TYPE: cast_W(buf) with round-to-nearest-even (identity when I == W).
  return round_to(p.w, bits_to_float(p.in_type, load_bits(p.in_type, p.buf, row + static_cast<std::size_t>(r))));
}

__global__ void cuda_expand_kernel(ExpandParams p) {
  const int j = static_cast<int>(blockIdx.z) / p.num_slices;
  const int slice = static_cast<int>(blockIdx.z) % p.num_slices;
  const std::int32_t lora = p.lora_ids[j];
  if (lora < 0) {
    return;  // tokens without LoRA: never written
  }
  const std::int64_t count = p.num_tokens_per_lora[j];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * p.block_m;
  const std::int64_t hidden = p.hidden[slice];
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.y) * p.block_n;
  if (first >= count || n0 >= hidden) {
    return;
  }
  if (j == p.skipped_j && slice == 0 && blockIdx.x == 0 && blockIdx.y == 0) {
    return;  // ExpandFault::skip_tile
  }
  const std::int32_t* tokens = p.sorted_tokens + p.lora_token_start_loc[j];
  const void* weights = p.lora_b[slice];
  for (std::int64_t e = threadIdx.x; e < p.block_m * p.block_n; e += blockDim.x) {
    const std::int64_t position = first + e / p.block_n;
    const std::int64_t n = n0 + e % p.block_n;
    if (position >= count || n >= hidden) {
      continue;
    }
    const std::int64_t token = tokens[position];
    const std::size_t weight_row = static_cast<std::size_t>((lora * hidden + n) * p.rank);
    float acc = 0.0f;
    for (std::int64_t r = 0; r < p.rank; ++r) {
      const float b = bits_to_float(p.w, load_bits(p.w, weights, weight_row + static_cast<std::size_t>(r)));
      acc = fmaf(a_operand(p, slice, token, r), b, acc);
    }
    const auto at = static_cast<std::size_t>(token * p.hidden_total + p.offset[slice] + n);
    std::uint32_t bits = float_to_bits(p.w, acc);
    if (p.add_inputs) {
      bits = float_to_bits(p.w, bits_to_float(p.w, bits) + bits_to_float(p.w, load_bits(p.w, p.y, at)));
    }
    store_bits(p.w, p.y, at, bits);
  }
}

}  // namespace

void cuda_expand(const ExpandParams& params, unsigned grid_x, unsigned grid_y, unsigned grid_z, cudaStream_t stream) {
  cuda_expand_kernel<<<dim3(grid_x, grid_y, grid_z), k_threads, 0, stream>>>(params);
  // The only runtime launch left (the tool itself launches through the driver).
  const cudaError_t error = cudaGetLastError();
  if (error != cudaSuccess) {
    throw Error(std::string("CUDA expand launch failed: ") + cudaGetErrorName(error));
  }
}

}  // namespace lp::device_launch
