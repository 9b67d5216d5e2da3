#pragma once
// The raw launchers of src/verify's .cu files. They check only the launch itself
// (LP_CUDA_CHECK on cudaGetLastError); argument checking with readable messages is
// done by the public wrappers in the .cpp files, because nvcc cannot compile fmt's
// compile-time format strings. Internal to src/verify.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "verify/compare_element.hpp"
#include "model/dtype.hpp"
#include "verify/inputs.hpp"
#include "model/problem.hpp"

namespace lp::device_launch {

/// dst[i] = generated_bits(t, range, seed, tensor, i) for i < count.
void fill_generated(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                    std::uint32_t tensor, cudaStream_t stream);

/// dst[i] = round_to(to, src[i]) for i < count.
void convert(const void* src, DType from, void* dst, DType to, std::size_t count, cudaStream_t stream);

/// Everything the CUDA expand kernel reads (cuda_expand.hpp has the semantics).
struct ExpandParams {
  const void* buf;                           ///< [S, T, R] of in_type
  const void* lora_b[k_max_slices];          ///< [L, H_s, R] of w
  void* y;                                   ///< [T, H_tot] of w
  const std::int32_t* lora_ids;
  const std::int32_t* num_tokens_per_lora;
  const std::int32_t* lora_token_start_loc;
  const std::int32_t* sorted_tokens;
  std::int64_t hidden[k_max_slices];
  std::int64_t offset[k_max_slices];
  std::int64_t num_tokens;
  std::int64_t rank;
  std::int64_t hidden_total;
  std::int64_t block_m;
  std::int64_t block_n;
  int num_slices;
  int skipped_j;  ///< the j whose first tile is skipped, -1 for none
  DType in_type;
  DType w;
  bool add_inputs;
  bool reinterpret_pairs;
};

/// Launches the CUDA expand on a grid_x x grid_y x grid_z grid (already checked
/// against the launch limits).
void cuda_expand(const ExpandParams& params, unsigned grid_x, unsigned grid_y, unsigned grid_z, cudaStream_t stream);

/// Runs the comparison kernel over `count` elements and then fetches the first bad
/// element's bits into *out (which must hold compare_detail::empty_block() and
/// `tile_failed` zeros beforehand).
void compare(const compare_detail::KernelLayout& layout, const compare_detail::ElementRule& rule, const void* actual,
             const void* expected, const std::int32_t* lora_of, unsigned* tile_failed,
             compare_detail::MetricsBlock* out, unsigned long long count, cudaStream_t stream);

}  // namespace lp::device_launch
