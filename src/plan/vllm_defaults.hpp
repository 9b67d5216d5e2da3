#pragma once
// vLLM's built-in LoRA kernel defaults, read from configs/vllm/defaults.json (built
// in): the one source of the plan's "vllm" values, of the kernel matrix
// (scripts/kernelgen/variants.py reads the same file) and of the ptxas matrix's
// default rows and answers (inspect/matrix.cpp).

#include <cstdint>
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

struct VllmDefaults {
  KernelKnobs expand_one_slice;    ///< one output slice
  KernelKnobs expand_more_slices;  ///< 2 or 3 slices (merged projections)
  int expand_block_k_newer = 0;    ///< the block_k newer vLLM versions write instead
  std::int64_t shrink_small_batch_below = 0;  ///< tokens: below this, the small-batch config
  KernelKnobs shrink_small_batch;
  KernelKnobs shrink_large_batch;
  int shrink_group_size_m = 0;
  AxisValues matrix_common;              ///< axes every default matrix row has
  std::vector<AxisValues> matrix_rows;   ///< the default rows, each axis list expanded
  std::vector<MatrixAnswer> matrix_answers;
};

/// The built-in file, parsed once. A malformed file is a broken build: lp::Error
/// naming the key (tests/plan/vllm_defaults_test.cpp parses it).
const VllmDefaults& vllm_defaults();

/// The text of configs/vllm/defaults.json as built in.
std::string_view vllm_defaults_text();

/// Parses `text` (the file's format); lp::InputError "<file>:<pointer>: message".
VllmDefaults parse_vllm_defaults(std::string_view text, const std::string& file);

}  // namespace lp::plan
