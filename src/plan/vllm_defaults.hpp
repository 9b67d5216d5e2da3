#pragma once
// vLLM's built-in LoRA kernel defaults, read from configs/vllm/defaults.json (built
// in): the one source of the plan's "vllm" values, of the kernel matrix
// (scripts/kernelgen/variants.py reads the same file) and of the ptxas matrix's
// default rows and answers (inspect/matrix.cpp).

#include <cstdint>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

#include <map>

#include "model/axis_values.hpp"

#include "plan/plan.hpp"

namespace lp::plan {

/// One answer of the ptxas matrix: a named group of fp32-input expand variants.
struct MatrixAnswer {
  std::string what;    ///< "vLLM default expand (block_n 128, num_stages 2, fp32 input)"
  std::string marker;  ///< what the table prints after the group's rows
  std::map<std::string, std::vector<AxisValue>> match;  ///< axis -> the values a variant may have (block_k, num_slices, block_n, num_stages)
};

/// vLLM's fused-MoE LoRA fast path (_run_fused_moe_lora_one_shot): hard-coded knobs,
/// no tuned file. block_m is the MoE layer's routing block (64 by default).
struct FusedMoeDefaults {
  int block_m = 0;  ///< with VLLM_TUNED_CONFIG_FOLDER set: get_lora_op_configs' fused_moe_lora default
  /// get_default_config's BLOCK_SIZE_M by the batch's tokens: (up_to, block_m), the
  /// last row's up_to the largest int64 (it has none in the file).
  std::vector<std::pair<std::int64_t, int>> block_m_by_tokens;
  std::int64_t two_kernel_max_tokens = 0;  ///< FUSED_MOE_LORA_TWO_KERNEL_MAX_TOKENS: the fast path above it
  std::int64_t naive_sparsity_factor = 0;  ///< naive routing: tokens x top_k x this <= experts x max_loras
  int naive_block_m = 0;                   ///< the fast path's BLOCK_M under naive routing
  /// The routing's BLOCK_M for a batch of `tokens` (get_default_config's rule).
  [[nodiscard]] int block_m_for(std::int64_t tokens) const;
  int block_n = 0;
  int num_stages = 0;
  int num_warps = 0;          ///< NPID_FACTOR 1
  int num_warps_split_n = 0;  ///< NPID_FACTOR > 1
  int block_k_wide = 0;
  int block_k_narrow = 0;
  std::int64_t wide_block_k_from_k = 0;               ///< K at or above this: block_k_wide
  std::int64_t wide_block_k_from_pairs_per_expert = 0;  ///< else: wide when pairs / experts reach this
  int max_rank = 0;
  int max_npid_factor = 0;
};

/// The fast path's launch for one case: the kernel's knobs and its NPID_FACTOR.
struct FusedMoeLaunch {
  KernelKnobs knobs;
  int npid_factor = 1;
};


struct VllmDefaults {
  KernelKnobs expand_one_slice;    ///< one output slice
  KernelKnobs expand_more_slices;  ///< 2 or 3 slices (merged projections)
  int expand_block_k_newer = 0;    ///< the block_k newer vLLM versions write instead
  std::int64_t shrink_small_batch_below = 0;  ///< tokens: below this, the small-batch config
  KernelKnobs shrink_small_batch;
  KernelKnobs shrink_large_batch;
  int shrink_group_size_m = 0;
  FusedMoeDefaults fused_moe;
  AxisValues matrix_common;              ///< axes every default matrix row has
  std::vector<AxisValues> matrix_rows;   ///< the default rows, each axis list expanded
  std::vector<MatrixAnswer> matrix_answers;
};

/// The built-in file, parsed once. A malformed file is a broken build: lp::Error
/// naming the key (tests/plan/vllm_defaults_test.cpp parses it).
const VllmDefaults& vllm_defaults();

/// What vLLM's fused-MoE fast path launches for `tokens` tokens routed to `top_k` of
/// `experts` experts, reading K = `k` into `slices` slices of N = `n` for `loras`
/// active adapters, with the routing padded to `block_m`, on a GPU of `sms` SMs:
/// block_k by K (or pairs per expert),
/// NPID_FACTOR by how far the grid is from 2x the SMs, capped by the shrink it
/// repeats and by N / 128, and 8 warps when NPID_FACTOR > 1.
FusedMoeLaunch vllm_fused_moe_launch(std::int64_t tokens, std::int64_t top_k, std::int64_t experts, std::int64_t k,
                                     std::int64_t n, std::int64_t slices, std::int64_t loras, int block_m,
                                     std::int64_t sms);

/// The text of configs/vllm/defaults.json as built in.
std::string_view vllm_defaults_text();

/// Parses `text` (the file's format); lp::InputError "<file>:<pointer>: message".
VllmDefaults parse_vllm_defaults(std::string_view text, const std::string& file);

}  // namespace lp::plan
