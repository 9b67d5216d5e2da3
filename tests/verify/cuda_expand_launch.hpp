#pragma once
// The raw launcher of cuda_expand.cu (the test-only CUDA expand): what its kernel
// reads. Internal to tests/verify.

#include <cuda_runtime_api.h>

#include <cstdint>

#include "model/dtype.hpp"
#include "model/problem.hpp"
#include "verify/compare_element.hpp"

namespace lp::device_launch {

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

}  // namespace lp::device_launch
