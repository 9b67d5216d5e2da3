#include "cuda_expand.hpp"
#include "families/device.hpp"
#include "families/family.hpp"

#include <algorithm>
#include <climits>

#include <fmt/format.h>

#include "util/error.hpp"
#include "cuda_expand_launch.hpp"

namespace lp {

std::string_view expand_fault_name(ExpandFault fault) noexcept {
  switch (fault) {
    case ExpandFault::none:
      return "none";
    case ExpandFault::skip_tile:
      return "skip_tile";
    case ExpandFault::reinterpret_pairs:
      return "reinterpret_pairs";
  }
  return "?";
}

void launch_cuda_expand(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                        const TileShape& tile, ExpandFault fault, const Stream& stream) {
  validate(problem);
  if (problem.op != Op::expand) {
    throw Error(fmt::format("the CUDA expand computes op expand, not {}", op_name(problem.op)));
  }
  if (fault == ExpandFault::reinterpret_pairs && problem.input_dtype != DType::f32) {
    throw Error(fmt::format("ExpandFault::reinterpret_pairs reads fp32 inputs as pairs, but the input is {}",
                            dtype_name(problem.input_dtype)));
  }
  if (tile.block_m <= 0 || tile.block_n <= 0) {
    throw Error(fmt::format("CUDA expand tile {}x{} is not positive", tile.block_m, tile.block_n));
  }
  device_launch::ExpandParams p{};
  p.buf = buffers.buf.raw();
  p.y = buffers.y.raw();
  p.lora_ids = static_cast<const std::int32_t*>(buffers.lora_ids.raw());
  p.num_tokens_per_lora = static_cast<const std::int32_t*>(buffers.num_tokens_per_lora.raw());
  p.lora_token_start_loc = static_cast<const std::int32_t*>(buffers.lora_token_start_loc.raw());
  p.sorted_tokens = static_cast<const std::int32_t*>(buffers.token_indices_sorted_by_lora_ids.raw());
  const std::vector<std::int64_t> offsets = problem.slice_offsets();
  for (std::int64_t s = 0; s < problem.num_slices(); ++s) {
    const auto i = static_cast<std::size_t>(s);
    p.lora_b[i] = buffers.lora_b[i].raw();
    p.hidden[i] = problem.slice_hidden[i];
    p.offset[i] = offsets[i];
  }
  p.num_tokens = problem.num_tokens;
  p.rank = problem.rank;
  p.hidden_total = problem.hidden_total();
  p.block_m = tile.block_m;
  p.block_n = tile.block_n;
  p.num_slices = static_cast<int>(problem.num_slices());
  p.in_type = problem.input_dtype;
  p.w = problem.weight_dtype;
  p.add_inputs = problem.add_inputs;
  p.reinterpret_pairs = fault == ExpandFault::reinterpret_pairs;
  p.skipped_j = -1;
  if (fault == ExpandFault::skip_tile) {
    const auto live = std::find_if(metadata.lora_ids.begin(), metadata.lora_ids.end(), [](std::int32_t id) { return id >= 0; });
    p.skipped_j = live == metadata.lora_ids.end() ? -1 : static_cast<int>(live - metadata.lora_ids.begin());
  }
  const std::int64_t widest = *std::max_element(problem.slice_hidden.begin(), problem.slice_hidden.end());
  const std::int64_t grid_x = (problem.num_tokens + tile.block_m - 1) / tile.block_m;
  const std::int64_t grid_y = (widest + tile.block_n - 1) / tile.block_n;
  const std::int64_t grid_z = metadata.num_active() * problem.num_slices();
  if (grid_x > INT_MAX || grid_y > 65535 || grid_z > 65535) {
    throw Error(fmt::format("CUDA expand grid {}x{}x{} exceeds the launch limits", grid_x, grid_y, grid_z));
  }
  device_launch::cuda_expand(p, static_cast<unsigned>(grid_x), static_cast<unsigned>(grid_y),
                             static_cast<unsigned>(grid_z), stream.get());
}

}  // namespace lp
