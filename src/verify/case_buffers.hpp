#pragma once
// The device tensors of one case, laid out as docs/problem.md says (contiguous,
// row-major), with seeded inputs and the output's pre-launch state.

#include <cstdint>
#include <initializer_list>
#include <vector>

#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "model/moe_routing.hpp"
#include "model/problem.hpp"

namespace lp {

/// Every device tensor of one case. Buffers an op does not use are empty.
/// fused_moe: x is [x_rows, K], lora_a per slice [L, E, R, K], lora_b per slice
/// [L, E, N, R], y_in / y / reference [T * top_k, S * N], and the routing below.
struct CaseBuffers {
  DeviceBuffer x;                     ///< [T, H_in] X (shrink, lora_linear)
  std::vector<DeviceBuffer> lora_a;   ///< per slice [L, R, H_in] X (shrink, lora_linear)
  std::vector<DeviceBuffer> lora_b;   ///< per slice [L, H_s, R] W (expand, lora_linear)
  /// [S, T, R]: expand's input (dtype I, generated), shrink's output (fp32), or
  /// lora_linear's intermediate (fp32, written by the shrink kernel).
  DeviceBuffer buf;
  DeviceBuffer y_in;                  ///< [T, H_tot] W, the base layer output (add_inputs only)
  DeviceBuffer y;                     ///< [T, H_tot] W, the output (expand, lora_linear)
  DeviceBuffer reference;             ///< expected output: same shape and dtype as output()
  // The mapping and its metadata (int32, docs/problem.md).
  DeviceBuffer lora_of;               ///< [T]
  DeviceBuffer lora_ids;              ///< [J]
  DeviceBuffer num_tokens_per_lora;   ///< [J]
  DeviceBuffer lora_token_start_loc;  ///< [J + 1]
  DeviceBuffer token_indices_sorted_by_lora_ids;  ///< [T]
  // fused_moe's routing (model/moe_routing.hpp): the host copy the device tensors
  // were uploaded from (the reference walks its groups), then the tensors.
  MoeRouting routing;
  DeviceBuffer topk_weights;            ///< [T * top_k] fp32
  DeviceBuffer sorted_token_ids;        ///< [L, EM] int32
  DeviceBuffer expert_ids;              ///< [L, EM / block_m] int32
  DeviceBuffer num_tokens_post_padded;  ///< [L] int32
  DeviceBuffer adapter_enabled;         ///< [L + 1] int32, all 1
  DeviceBuffer pair_lora;               ///< [T * top_k] int32: the adapter of each output row
  DeviceBuffer group_pairs;             ///< routing.group_pairs, for the reference
  // The FP8 families' operands as their kernels read them (fp8e4m3) and their fp32
  // scales; the reference reads the exactly dequantized copies in x and lora_a (shrink)
  // or buf and lora_b (expand) above.
  DeviceBuffer fp8_activation;          ///< x [T, H_in] or buf [T, R]
  DeviceBuffer fp8_weights;             ///< A [L, R, H_in] or B [L, H, R]
  DeviceBuffer activation_scale;        ///< [1], or [T, cdiv(K, g)] block-wise
  DeviceBuffer weight_scale;            ///< [L], or [L, cdiv(N, g), cdiv(K, g)] block-wise
};

// The steps a family's make_buffers (families/device.hpp) composes. Everything is
// queued on `stream` and the buffers are stream-ordered there (they must die before it).

/// elements of the dims' product.
[[nodiscard]] std::size_t elements(std::initializer_list<std::int64_t> dims);
/// An int32 host vector on the device.
[[nodiscard]] DeviceBuffer upload_ints(const std::vector<std::int32_t>& values, const Stream& stream);
/// Fills `buffer` with the poison of `t` (verify/poison.hpp).
void fill_poison(DeviceBuffer& buffer, DType t, const Stream& stream);
/// lora_of and the mapping's metadata, all five.
void upload_metadata(CaseBuffers& b, const Problem& p, const LoraMetadata& m, const Stream& stream);
/// The shrink's inputs: x [T, H_in] and A per slice [L, R, H_in], in X, generated.
void add_shrink_inputs(CaseBuffers& b, const Problem& p, const Stream& stream);
/// The expand's weights B per slice [L, H_s, R] (generated), y [T, H_tot] and, with
/// ADD_INPUTS, y_in (generated), all in W.
void add_expand_tensors(CaseBuffers& b, const Problem& p, const Stream& stream);

}  // namespace lp
