#pragma once
// One LoRA problem as docs/problem.md describes it: the op, the sizes, the dtypes
// and the token -> LoRA mapping, plus the metadata vLLM derives from the mapping
// (computed on the host exactly as docs/problem.md says). Pure host code.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

#include "model/dtype.hpp"

namespace lp {

/// What the kernel under test computes (docs/problem.md): the kernel family. Each
/// value is a family of src/families/ (registry.cpp), which answers everything that
/// depends on it: its name, its rules, its tolerance, its buffers and kernels.
enum class Op : std::uint8_t {
  expand,       ///< buf [S,T,R] (dtype I) -> y [T,H_tot] (dtype W)
  shrink,       ///< x [T,H] (dtype X) -> buf [S,T,R] fp32, times scale
  lora_linear,  ///< shrink then expand with I = fp32: the path on which vLLM hits the bug
  /// vLLM's fused-MoE LoRA in one launch (docs/problem.md "Fused-MoE LoRA"): for each
  /// routed pair p = t * top_k + j, out[p, s*N + n] (+)= round_W(w_p * round_W(x A^T) B^T)
  /// with the pair's expert's A and B; x [T or T*top_k, K] W -> out [T*top_k, S*N] W.
  fused_moe,
  /// vLLM's FP8 w8a8 shrink (docs/problem.md "FP8 w8a8 shrink and expand"): x [T, H]
  /// and A [L, R, H] in fp8e4m3 with their scales -> buf [T, R] fp32, times scale.
  shrink_fp8,
  /// vLLM's FP8 w8a8 expand: buf [T, R] and B [L, H, R] in fp8e4m3 with their scales
  /// -> y [T, H] (dtype W), added into y with add_inputs.
  expand_fp8,
};

/// The routing of a fused_moe problem (Problem::moe; zero for the other ops).
struct ExpertRouting {
  std::int32_t num_experts = 0;     ///< E
  std::int32_t top_k = 0;           ///< experts per token
  /// The down projection: x has one row per pair and each pair's result is scaled by
  /// its routing weight (MUL_ROUTED_WEIGHT); otherwise (gate/up) x has one row per
  /// token, shared by its top_k pairs, and no weight.
  bool mul_routed_weight = false;
  /// The block size vLLM's moe_lora_align_block_size pads each expert's pairs to, which
  /// must be the kernel's BLOCK_M.
  std::int32_t block_m = 0;
  bool operator==(const ExpertRouting&) const = default;
};

/// Sizes, types and mapping of one case. Field names follow docs/problem.md.
struct Problem {
  Op op = Op::expand;
  std::int64_t num_tokens = 0;             ///< T
  std::int64_t rank = 0;                   ///< R
  /// H_s, one per slice (S = size(), 1 to 3); expand's output widths. For op shrink
  /// S slices all read the same x, so every entry must equal hidden_in (docs: H = H_0).
  std::vector<std::int64_t> slice_hidden;
  /// H of shrink: the width of x (shrink and lora_linear; ignored by expand).
  std::int64_t hidden_in = 0;
  std::int32_t num_loras = 1;              ///< L
  /// expand: I, the dtype of buf (fp32, bf16 or fp16). shrink and lora_linear: X,
  /// the dtype of x and of the A weights, which must equal weight_dtype.
  DType input_dtype = DType::f32;
  DType weight_dtype = DType::bf16;        ///< W: B weights and y (bf16 or fp16)
  bool add_inputs = false;                 ///< y += ... instead of y = ... (expand, lora_linear)
  float scale = 1.0f;                      ///< shrink's scaling (shrink, lora_linear; 1 for expand)
  std::uint64_t seed = 0;                  ///< inputs and mapping are a function of this
  std::int32_t split_k = 1;                ///< shrink's SPLIT_K (shrink, lora_linear; 1 for expand)
  /// The expand kernel's amplification (src/ptx/amplify.hpp): dependent wgmma pairs
  /// before each of its register-A wgmmas, 0 for none (at most k_max_amplify). Only
  /// the tolerance reads it.
  std::int32_t amplify = 0;
  /// The FP8 families' scales: the block-wise group g (group_n = group_k = g: the
  /// activation has a scale per row and g columns, the weights one per g x g block),
  /// or 0 for per-tensor scales (one for the activation, one per adapter's weights).
  /// 0 for the other ops.
  std::int32_t scale_group = 0;
  std::vector<std::int32_t> lora_of;       ///< T entries in {-1, 0..L-1}; -1 = no LoRA
  /// fused_moe: the experts and how tokens are routed to them. slice_hidden is then
  /// N per slice (all equal), hidden_in is K, and input_dtype equals weight_dtype.
  ExpertRouting moe;

  [[nodiscard]] std::int64_t num_slices() const noexcept { return static_cast<std::int64_t>(slice_hidden.size()); }
  /// H_tot = sum of H_s.
  [[nodiscard]] std::int64_t hidden_total() const noexcept;
  /// off_s = sum_{j<s} H_j (size S).
  [[nodiscard]] std::vector<std::int64_t> slice_offsets() const;
  bool operator==(const Problem&) const = default;
};

/// What a problem's inputs are a function of, besides the seed, as text: the op, the
/// sizes, the dtypes, add_inputs, the scale, the FP8 scale group and the MoE routing
/// (its block_m too: the routed pairs are padded to it). Not split_k and not amplify,
/// which change how a kernel computes, not what it is given. Every variant, compiler
/// and Triton set that runs one problem sees the same inputs (sweep/entries.cpp seeds
/// by it), so their deviations compare directly, and a worker computes its reference once.
[[nodiscard]] std::string inputs_key(const Problem& p);

/// The most dependent wgmma pairs the amplifier queues before each register-A wgmma
/// (src/ptx/amplify.hpp): the bound of the `amplify` axis, of Problem::amplify and of
/// every document that carries the count.
inline constexpr int k_max_amplify = 64;

/// The maximum number of slices (docs/problem.md: 1, 2 or 3).
inline constexpr std::int64_t k_max_slices = 3;

/// What vLLM's LoRA mapping hands the kernels (docs/problem.md), all int32.
struct LoraMetadata {
  std::vector<std::int32_t> lora_ids;                          ///< J distinct lora_of values, ascending (-1 first if present)
  std::vector<std::int32_t> num_tokens_per_lora;               ///< J
  std::vector<std::int32_t> lora_token_start_loc;              ///< J + 1, exclusive prefix sum
  std::vector<std::int32_t> token_indices_sorted_by_lora_ids;  ///< T, stable sort of token indices by lora_of
  /// J, the grid's z extent.
  [[nodiscard]] std::int64_t num_active() const noexcept { return static_cast<std::int64_t>(lora_ids.size()); }
  /// Tokens whose lora_of is not -1.
  [[nodiscard]] std::int64_t live_tokens() const noexcept;
  /// Distinct LoRAs used (lora_ids without -1).
  [[nodiscard]] std::int64_t used_loras() const noexcept;
};

/// Builds the metadata from lora_of. Throws lp::Error when an entry is outside
/// {-1, 0..num_loras-1} or there are more than INT32_MAX tokens.
[[nodiscard]] LoraMetadata build_lora_metadata(std::span<const std::int32_t> lora_of, std::int32_t num_loras);

/// The seeded token -> LoRA mapping: with one LoRA every token uses LoRA 0 (the
/// field report's single-adapter prompt). With L > 1 the T tokens are dealt round
/// robin over {-1, 0, .., L-1} (so about T/(L+1) tokens have no LoRA and every
/// adapter appears once T > L) and shuffled with a seeded Fisher-Yates whose
/// generator (SplitMix64) and bounded draw are our own, so the mapping is the same
/// on every platform and standard library. Throws lp::Error for T < 0 or L < 1.
[[nodiscard]] std::vector<std::int32_t> make_token_mapping(std::int64_t num_tokens, std::int32_t num_loras,
                                                           std::uint64_t seed);

}  // namespace lp
