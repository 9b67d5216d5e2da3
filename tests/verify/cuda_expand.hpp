#pragma once
// A plain, obviously correct expand written in CUDA C++ (not Triton): one thread
// per output element, a sequential fp32 FMA loop over r, the rounding and
// ADD_INPUTS order of docs/problem.md. It launches on the same tensors and goes
// through the same comparison as the Triton kernels, so the whole verify layer can
// be checked on a GPU before the Triton launcher exists: the clean kernel must
// pass with margin, and the two deliberately broken variants must be caught.

#include <cstdint>
#include <string_view>

#include "cuda/stream.hpp"
#include "verify/case_buffers.hpp"
#include "verify/compare.hpp"
#include "model/problem.hpp"

namespace lp {

/// A deliberate defect of the CUDA expand.
enum class ExpandFault : std::uint8_t {
  none,              ///< correct
  /// The program of the first output tile (slice 0, first LoRA in use, first block_m
  /// sorted tokens, first block_n columns) returns without storing: with poison the
  /// comparison must count block_m x block_n unwritten elements in one failing tile
  /// (one LoRA) and nothing else.
  skip_tile,
  /// Reads the bits of each fp32 input element as two W values ("bf16 pairs" for
  /// W = bf16): A operand k is half (k % 2) of fp32 element k / 2 -- what the
  /// in-flight HGMMA of the Hopper hazard sees when its A registers are overwritten.
  /// Needs an fp32 input (CAST_TYPE); produces garbage of any magnitude, NaN and Inf.
  reinterpret_pairs,
};

/// "none", "skip_tile", "reinterpret_pairs".
std::string_view expand_fault_name(ExpandFault fault) noexcept;

/// Launches the CUDA expand of `problem` (op expand) on `buffers`: reads buffers.buf
/// and lora_b, writes buffers.y (reading it first with ADD_INPUTS), rows of tokens
/// without LoRA untouched. Tiles are tile.block_m sorted tokens of one LoRA x
/// tile.block_n columns of one slice, like the Triton kernel's programs.
/// Asynchronous on `stream`. Throws lp::Error for an op other than expand, a
/// reinterpret_pairs fault without fp32 input, or a bad tile; lp::CudaError on failure.
void launch_cuda_expand(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                        const TileShape& tile, ExpandFault fault, const Stream& stream);

}  // namespace lp
