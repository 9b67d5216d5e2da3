#include "families/fused_moe/fused_moe_device.hpp"

#include <algorithm>
#include <span>

#include "families/device_rules.hpp"
#include "families/fused_moe/routing.hpp"
#include "verify/inputs.hpp"
#include "verify/reference_kernels.hpp"

namespace lp {
namespace {

using namespace family_rules;
using namespace launch_value;
using reference_detail::finish_expand;
using reference_detail::gather_rows;
using reference_detail::scale_rows;

std::int64_t largest_routing_group(const MoeRouting& routing) {
  std::int64_t largest = 0;
  for (const MoeRouting::Group& g : routing.groups) {
    largest = std::max(largest, g.count);
  }
  return largest;
}

class FusedMoeDevice final : public DeviceFamily {
 public:
  // docs/problem.md "Fused-MoE LoRA": the same generated ranges as lora_linear; x
  // [x_rows, K], A per slice [L, E, R, K], B per slice [L, E, N, R], y / y_in /
  // reference [T * top_k, S * N], and the routing.
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    const std::int64_t l = p.num_loras;
    const std::int64_t e = p.moe.num_experts;
    const std::int64_t k = p.hidden_in;
    const std::int64_t n = p.slice_hidden.at(0);
    const DType w = p.weight_dtype;
    CaseBuffers b;
    b.x = DeviceBuffer(elements({x_rows(p), k}) * dtype_size(w), stream);
    fill_generated(b.x, w, k_activation_range, p.seed, tensor_id::x, stream);
    for (std::int64_t s = 0; s < p.num_slices(); ++s) {
      b.lora_a.emplace_back(elements({l, e, p.rank, k}) * dtype_size(w), stream);
      fill_generated(b.lora_a.back(), w, k_weight_range, p.seed, tensor_id::lora_a(s), stream);
      b.lora_b.emplace_back(elements({l, e, n, p.rank}) * dtype_size(w), stream);
      fill_generated(b.lora_b.back(), w, k_weight_range, p.seed, tensor_id::lora_b(s), stream);
    }
    b.y = DeviceBuffer(elements({output_rows(p), p.num_slices() * n}) * dtype_size(w), stream);
    if (p.add_inputs) {
      b.y_in = DeviceBuffer(b.y.bytes(), stream);
      fill_generated(b.y_in, w, k_activation_range, p.seed, tensor_id::y_in, stream);
    }
    b.reference = DeviceBuffer(b.y.bytes(), stream);
    upload_routing(b, p, stream);
    b.lora_of = upload_ints(p.lora_of, stream);
    b.lora_ids = upload_ints(m.lora_ids, stream);
    return b;
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata&, const CaseBuffers& b,
                                    const Stream& stream) const override {
    const std::int64_t pairs = largest_routing_group(b.routing);
    const std::size_t w_size = dtype_size(p.weight_dtype);
    Workspace w;
    w.gathered_x = DeviceBuffer(workspace_bytes(pairs, p.hidden_in, w_size), stream);
    w.shrink_acc = DeviceBuffer(workspace_bytes(pairs, p.rank, sizeof(float)), stream);
    w.shrink_w = DeviceBuffer(workspace_bytes(pairs, p.rank, w_size), stream);
    w.expand_acc = DeviceBuffer(workspace_bytes(pairs, p.slice_hidden.at(0), sizeof(float)), stream);
    return w;
  }

  // One (adapter, expert) group at a time: gather its pairs' x rows, tmp = x A_e^T in
  // fp32, round tmp to W (the kernel's rank tile), acc = tmp B_e^T in fp32, times the
  // routing weight (down), then the expand's finishing into the pairs' output rows.
  void reference(const Problem& p, const LoraMetadata&, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    const DType w_type = p.weight_dtype;
    const std::int64_t r = p.rank;
    const std::int64_t k = p.hidden_in;
    const std::int64_t n = p.slice_hidden.at(0);
    const std::int64_t row_divisor = p.moe.mul_routed_weight ? 1 : p.moe.top_k;
    for (const MoeRouting::Group& g : b.routing.groups) {
      const std::int32_t* pairs = typed<const std::int32_t>(b.group_pairs) + g.begin;
      gather_rows(b.x.raw(), w_type, k, pairs, g.count, k, w.gathered_x.raw(), stream, row_divisor);
      const std::int64_t weights = static_cast<std::int64_t>(g.lora) * p.moe.num_experts + g.expert;  // [L, E]
      for (std::int64_t s = 0; s < p.num_slices(); ++s) {
        const auto slice = static_cast<std::size_t>(s);
        const void* a_weights = element_at(b.lora_a[slice], static_cast<std::size_t>(weights * r * k), w_type);
        gemm_abt(cublas, g.count, r, k, w_type, w.gathered_x.raw(), a_weights, 1.0f, typed<float>(w.shrink_acc));
        convert_on_device(w.shrink_acc.raw(), DType::f32, w.shrink_w.raw(), w_type,
                          static_cast<std::size_t>(g.count * r), stream);
        const void* b_weights = element_at(b.lora_b[slice], static_cast<std::size_t>(weights * n * r), w_type);
        gemm_abt(cublas, g.count, n, r, w_type, w.shrink_w.raw(), b_weights, 1.0f, typed<float>(w.expand_acc));
        if (p.moe.mul_routed_weight) {
          scale_rows(typed<float>(w.expand_acc), g.count, n, pairs, typed<const float>(b.topk_weights), stream);
        }
        finish_expand(typed<float>(w.expand_acc), g.count, n, pairs, w_type, p.add_inputs, b.y_in.raw(),
                      b.reference.raw(), p.num_slices() * n, s * n, stream);
      }
    }
  }

  // _fused_moe_lora_one_shot_kernel's arguments as vLLM's _run_fused_moe_lora_one_shot
  // passes them: x [x_rows, K], A_s [L, E, R, K], B_s [L, E, N, R], out [T * top_k, S * N].
  [[nodiscard]] std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                    bool) const override {
    const Problem& p = in.problem;
    const CaseBuffers& b = in.buffers;
    const std::pair<const char*, const DeviceBuffer*> index_arrays[] = {
        {"sorted_token_ids_ptr", &b.sorted_token_ids}, {"expert_ids_ptr", &b.expert_ids},
        {"num_tokens_post_padded_ptr", &b.num_tokens_post_padded}, {"token_lora_mapping_ptr", &b.lora_of},
        {"lora_ids_ptr", &b.lora_ids}, {"adapter_enabled_ptr", &b.adapter_enabled}};
    for (const auto& [array, buffer] : index_arrays) {
      if (name == array) {
        return Pointer{buffer->get(), DType::f32};  // int32: the launcher checks index arrays by name, not dtype
      }
    }
    if (const std::optional<std::int64_t> integer = integer_argument(p, b.routing, name)) {
      return Integer{*integer};
    }
    if (name == "x_ptr") {
      return Pointer{b.x.get(), p.weight_dtype};
    }
    if (name == "A_ptrs") {
      return slice_addresses(b.lora_a);
    }
    if (name == "B_ptrs") {
      return slice_addresses(b.lora_b);
    }
    if (name == "out_ptr") {
      return Pointer{b.y.get(), p.weight_dtype};
    }
    if (name == "topk_weights_ptr") {
      return Pointer{b.topk_weights.get(), DType::f32};
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<std::int64_t> grid_quantity(const LaunchInputs& in,
                                                          const std::string& name) const override {
    if (name == "padded_pairs") {
      return in.buffers.routing.padded_pairs;
    }
    return std::nullopt;
  }

  // The rank, the routing's block size, the x rows per pair and the routing weight
  // are all compiled in.
  void check_variant(const kernels::Variant& v, const Problem& p) const override {
    const auto want = [&](const char* name, std::int64_t value) {
      const std::optional<std::int64_t> got = v.constexprs.integer(name);
      if (!got || *got != value) {
        throw AbiViolation(fmt::format("variant {} has {}={} but the case needs {}", v.id, name,
                                       got ? std::to_string(*got) : "none", value));
      }
    };
    const auto want_flag = [&](const char* name, bool value) {
      const std::optional<bool> got = v.constexprs.boolean(name);
      if (!got || *got != value) {
        throw AbiViolation(fmt::format("variant {} has {}={} but the case needs {}", v.id, name,
                                       got ? (*got ? "true" : "false") : "none", value));
      }
    };
    want("actual_rank", p.rank);
    want("BLOCK_M", p.moe.block_m);
    want("token_mapping_factor", p.moe.mul_routed_weight ? 1 : p.moe.top_k);
    want_flag("MUL_ROUTED_WEIGHT", p.moe.mul_routed_weight);
    want_flag("ADD_INPUTS", p.add_inputs);
    want_flag("naive_block_assignment", false);
    const std::int64_t block_k = constexpr_int(v, "BLOCK_K", 1);
    if (v.constexprs.boolean("EVEN_K").value_or(false) && p.hidden_in % block_k != 0) {
      throw AbiViolation(fmt::format("variant {} assumes EVEN_K but K={} is not a multiple of BLOCK_K={}", v.id,
                                     p.hidden_in, block_k));
    }
  }

 private:
  static void upload_routing(CaseBuffers& b, const Problem& p, const Stream& stream) {
    b.routing = make_moe_routing(p);
    b.topk_weights = upload(std::span<const float>(b.routing.topk_weights), stream);
    b.sorted_token_ids = upload_ints(b.routing.sorted_token_ids, stream);
    b.expert_ids = upload_ints(b.routing.expert_ids, stream);
    b.num_tokens_post_padded = upload_ints(b.routing.num_tokens_post_padded, stream);
    b.adapter_enabled = upload_ints(std::vector<std::int32_t>(static_cast<std::size_t>(p.num_loras) + 1, 1), stream);
    b.pair_lora = upload_ints(b.routing.pair_lora, stream);
    if (!b.routing.group_pairs.empty()) {
      b.group_pairs = upload_ints(b.routing.group_pairs, stream);
    }
  }

  static std::optional<std::int64_t> integer_argument(const Problem& p, const MoeRouting& routing,
                                                      const std::string& name) {
    const std::int64_t R = p.rank;
    const std::int64_t S = p.num_slices();
    const std::int64_t K = p.hidden_in;
    const std::int64_t N = p.slice_hidden.at(0);
    const std::int64_t E = p.moe.num_experts;
    const std::pair<const char*, std::int64_t> integers[] = {
        {"N", N},
        {"K", K},
        {"num_valid_tokens", output_rows(p)},
        {"top_k_num", p.moe.top_k},
        {"max_loras", p.num_loras},
        {"stride_xm", K},
        {"stride_xk", 1},
        {"stride_A_lora", E * R * K},
        {"stride_A_expert", R * K},
        {"stride_A_r", K},
        {"stride_A_k", 1},
        {"stride_B_lora", E * N * R},
        {"stride_B_expert", N * R},
        {"stride_B_n", R},
        {"stride_B_r", 1},
        {"stride_om", S * N},
        {"stride_on", 1},
        {"stride_tl_", routing.padded_pairs},
        {"stride_el", routing.padded_pairs / p.moe.block_m},
        {"slice_n_offset", N}};
    for (const auto& [integer, value] : integers) {
      if (name == integer) {
        return value;
      }
    }
    return std::nullopt;
  }
};

}  // namespace

const DeviceFamily& fused_moe_device() noexcept {
  static const FusedMoeDevice family;
  return family;
}

}  // namespace lp
