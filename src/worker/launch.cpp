#include "worker/launch.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <variant>

#include <fmt/format.h>

#include "kernels/abi.hpp"
#include "model/dtype.hpp"

namespace lp::worker {

namespace {

/// A runtime argument's value before it is checked against the manifest.
struct Integer {
  std::int64_t value;
};
struct Float {
  float value;
};
struct Pointer {
  CUdeviceptr value;
  DType dtype;  ///< element type the tensor holds
};
struct U64Array {
  std::vector<std::uint64_t> values;  ///< device addresses or offsets
};
struct I64Array {
  std::vector<std::int64_t> values;  ///< per-slice strides or widths
};
using Value = std::variant<Integer, Float, Pointer, U64Array, I64Array>;

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

/// The Triton pointer type of a tensor of `dtype` ("*fp32", "*bf16", "*fp16").
std::string triton_pointer_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "*fp32";
    case DType::bf16:
      return "*bf16";
    case DType::f16:
      return "*fp16";
  }
  return "*?";
}

class Arguments {
 public:
  Arguments(KernelRole role, const Problem& p, const LoraMetadata& m, CaseBuffers& b) : m_role(role), m_p(p), m_m(m), m_b(b) {}

  /// The value of argument `name` for this role; `pointer_form` says whether the
  /// variant takes it as a pointer (per-slice array) or a scalar.
  Value value(const std::string& name, bool pointer_form) const {
    const std::int64_t T = m_p.num_tokens;
    const std::int64_t R = m_p.rank;
    const std::int64_t S = m_p.num_slices();
    if (name == "token_indices_sorted_by_lora_ids") {
      return Pointer{m_b.token_indices_sorted_by_lora_ids.get(), DType::f32};
    }
    if (name == "num_tokens_per_lora") {
      return Pointer{m_b.num_tokens_per_lora.get(), DType::f32};
    }
    if (name == "lora_token_start_loc") {
      return Pointer{m_b.lora_token_start_loc.get(), DType::f32};
    }
    if (name == "lora_ids") {
      return Pointer{m_b.lora_ids.get(), DType::f32};
    }
    if (name == "M") {
      return Integer{T};
    }
    if (m_role == KernelRole::fused_moe) {
      return fused_moe_value(name, R, S);
    }
    return m_role == KernelRole::expand ? expand_value(name, pointer_form, T, R, S) : shrink_value(name, pointer_form, T, R, S);
  }

 private:
  // _fused_moe_lora_one_shot_kernel's arguments as vLLM's _run_fused_moe_lora_one_shot
  // passes them: x [x_rows, K], A_s [L, E, R, K], B_s [L, E, N, R], out [T * top_k, S * N].
  Value fused_moe_value(const std::string& name, std::int64_t R, std::int64_t S) const {
    const std::int64_t K = m_p.hidden_in;
    const std::int64_t N = m_p.slice_hidden.at(0);
    const std::int64_t E = m_p.moe.num_experts;
    const MoeRouting& routing = m_b.routing;
    const auto addresses = [](const std::vector<DeviceBuffer>& slices) {
      U64Array a;
      for (const DeviceBuffer& b : slices) {
        a.values.push_back(b.get());
      }
      return a;
    };
    const std::pair<const char*, const DeviceBuffer*> index_arrays[] = {
        {"sorted_token_ids_ptr", &m_b.sorted_token_ids}, {"expert_ids_ptr", &m_b.expert_ids},
        {"num_tokens_post_padded_ptr", &m_b.num_tokens_post_padded}, {"token_lora_mapping_ptr", &m_b.lora_of},
        {"lora_ids_ptr", &m_b.lora_ids}, {"adapter_enabled_ptr", &m_b.adapter_enabled}};
    for (const auto& [array, buffer] : index_arrays) {
      if (name == array) {
        return Pointer{buffer->get(), DType::f32};  // int32: the launcher checks index arrays by name, not dtype
      }
    }
    const std::pair<const char*, std::int64_t> integers[] = {
        {"N", N},
        {"K", K},
        {"num_valid_tokens", m_p.output_rows()},
        {"top_k_num", m_p.moe.top_k},
        {"max_loras", m_p.num_loras},
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
        {"stride_el", routing.padded_pairs / m_p.moe.block_m},
        {"slice_n_offset", N}};
    for (const auto& [integer, value] : integers) {
      if (name == integer) {
        return Integer{value};
      }
    }
    if (name == "x_ptr") {
      return Pointer{m_b.x.get(), m_p.weight_dtype};
    }
    if (name == "A_ptrs") {
      return addresses(m_b.lora_a);
    }
    if (name == "B_ptrs") {
      return addresses(m_b.lora_b);
    }
    if (name == "out_ptr") {
      return Pointer{m_b.y.get(), m_p.weight_dtype};
    }
    if (name == "topk_weights_ptr") {
      return Pointer{m_b.topk_weights.get(), DType::f32};
    }
    throw AbiViolation(fmt::format("fused_moe argument {} has no value in loraprobe's launcher", name));
  }

  Value expand_value(const std::string& name, bool pointer_form, std::int64_t T, std::int64_t R, std::int64_t S) const {
    const auto& H = m_p.slice_hidden;
    const std::int64_t max_h = *std::max_element(H.begin(), H.end());
    if (name == "input_ptr") {
      return Pointer{m_b.buf.get(), m_p.expand_input_dtype()};
    }
    if (name == "lora_ptr") {
      if (!pointer_form || S == 1) {
        return Pointer{m_b.lora_b.at(0).get(), m_p.weight_dtype};
      }
      U64Array a;
      for (const DeviceBuffer& b : m_b.lora_b) {
        a.values.push_back(b.get());
      }
      return a;
    }
    if (name == "out_ptr") {
      return Pointer{m_b.y.get(), m_p.weight_dtype};
    }
    if (name == "N") {
      return Integer{max_h};
    }
    if (name == "K") {
      return Integer{R};
    }
    if (name == "slice_start_loc") {
      if (!pointer_form) {
        return Integer{0};
      }
      U64Array a;
      for (std::int64_t off : m_p.slice_offsets()) {
        a.values.push_back(static_cast<std::uint64_t>(off));
      }
      return a;
    }
    if (name == "input_d0_stride") {
      return Integer{T * R};
    }
    if (name == "input_d1_stride") {
      return Integer{R};
    }
    if (name == "input_d2_stride" || name == "output_d1_stride") {
      return Integer{1};
    }
    if (name == "ls_d0_ptr" || name == "ls_d1_ptr" || name == "ls_d2_ptr" || name == "output_hs_ptr") {
      auto per_slice = [&](std::int64_t h) -> std::int64_t {
        if (name == "ls_d0_ptr") {
          return h * R;
        }
        if (name == "ls_d1_ptr") {
          return R;
        }
        if (name == "ls_d2_ptr") {
          return 1;
        }
        return h;
      };
      if (!pointer_form) {
        return Integer{per_slice(H.at(0))};
      }
      I64Array a;
      for (std::int64_t h : H) {
        a.values.push_back(per_slice(h));
      }
      return a;
    }
    if (name == "output_d0_stride") {
      return Integer{m_p.hidden_total()};
    }
    throw AbiViolation(fmt::format("expand argument {} has no value in loraprobe's launcher", name));
  }

  Value shrink_value(const std::string& name, bool pointer_form, std::int64_t T, std::int64_t R, std::int64_t S) const {
    const std::int64_t H = m_p.hidden_in;
    if (name == "input_ptr") {
      return Pointer{m_b.x.get(), m_p.weight_dtype};
    }
    if (name == "lora_ptr") {
      if (!pointer_form || S == 1) {
        return Pointer{m_b.lora_a.at(0).get(), m_p.weight_dtype};
      }
      U64Array a;
      for (const DeviceBuffer& b : m_b.lora_a) {
        a.values.push_back(b.get());
      }
      return a;
    }
    if (name == "out_ptr") {
      return Pointer{m_b.buf.get(), DType::f32};
    }
    if (name == "N") {
      return Integer{R};
    }
    if (name == "K") {
      return Integer{H};
    }
    if (name == "scaling") {
      return Float{m_p.scale};
    }
    if (name == "input_d0_stride" || name == "lora_d1_stride") {
      return Integer{H};
    }
    if (name == "lora_d0_stride") {
      return Integer{R * H};
    }
    if (name == "output_d0_stride") {
      return Integer{T * R};
    }
    if (name == "output_d1_stride") {
      return Integer{R};
    }
    if (name == "input_d1_stride" || name == "lora_d2_stride" || name == "output_d2_stride") {
      return Integer{1};
    }
    throw AbiViolation(fmt::format("shrink argument {} has no value in loraprobe's launcher", name));
  }

  KernelRole m_role;
  const Problem& m_p;
  const LoraMetadata& m_m;
  CaseBuffers& m_b;
};

std::int64_t grid_quantity(const std::string& name, const Problem& p, const LoraMetadata& m, const CaseBuffers& b) {
  if (name == "padded_pairs") {
    if (p.op != Op::fused_moe) {
      throw AbiViolation(fmt::format("grid quantity \"padded_pairs\" needs a fused_moe case, not {}", op_name(p.op)));
    }
    return b.routing.padded_pairs;
  }
  if (name == "num_tokens") {
    return p.num_tokens;
  }
  if (name == "rank") {
    return p.rank;
  }
  if (name == "hidden_size") {
    return p.hidden_in;
  }
  if (name == "max_hidden_size") {
    return *std::max_element(p.slice_hidden.begin(), p.slice_hidden.end());
  }
  if (name == "num_slices") {
    return p.num_slices();
  }
  if (name == "num_lora_ids") {
    return m.num_active();
  }
  throw AbiViolation(fmt::format("grid quantity \"{}\" is not one loraprobe knows", name));
}

std::int64_t grid_factor(const AxisValue& factor, const kernels::Variant& v, const Problem& p, const LoraMetadata& m,
                         const CaseBuffers& b) {
  if (const std::optional<std::int64_t> n = factor.integer()) {
    return *n;
  }
  const std::string text = factor.text().value_or("");  // the manifest reader allows nothing else
  if (text.rfind("cdiv:", 0) == 0) {
    const std::size_t colon = text.find(':', 5);
    const std::string quantity = text.substr(5, colon - 5);
    const std::string constexpr_name = text.substr(colon + 1);
    const std::optional<std::int64_t> divisor =
        colon == std::string::npos ? std::nullopt : v.constexprs.integer(constexpr_name);
    if (!divisor || *divisor < 1) {
      throw AbiViolation(fmt::format("variant {}: grid factor \"{}\" names no positive whole-number constexpr", v.id,
                                     text));
    }
    const std::int64_t d = *divisor;
    return (grid_quantity(quantity, p, m, b) + d - 1) / d;
  }
  return grid_quantity(text, p, m, b);
}

std::int64_t constexpr_int(const kernels::Variant& v, const char* name, std::int64_t fallback) {
  return v.constexprs.integer(name).value_or(fallback);
}

// The fused-MoE kernel's constexprs against the case: the rank, the routing's block
// size, the x rows per pair and the routing weight are all compiled in.
void check_fused_moe_constexprs(const kernels::Variant& v, const Problem& p) {
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

void check_constexprs(const kernels::Variant& v, KernelRole role, const Problem& p) {
  if ((role == KernelRole::fused_moe) != (p.op == Op::fused_moe)) {
    throw AbiViolation(fmt::format("variant {} ({}) cannot run a {} case", v.id, v.op, op_name(p.op)));
  }
  if (role == KernelRole::fused_moe) {
    check_fused_moe_constexprs(v, p);
    return;
  }
  const std::int64_t slices = constexpr_int(v, "SLICE_NUM", 1);
  if (slices != p.num_slices()) {
    throw AbiViolation(fmt::format("variant {} is built for SLICE_NUM={} but the case has {} slices", v.id, slices,
                                   p.num_slices()));
  }
  const bool even_k = v.constexprs.boolean("EVEN_K").value_or(false);
  const std::int64_t block_k = constexpr_int(v, "BLOCK_K", 1);
  const std::int64_t split_k = constexpr_int(v, "SPLIT_K", 1);
  const std::int64_t k = role == KernelRole::expand ? p.rank : p.hidden_in;
  if (even_k && k % (block_k * split_k) != 0) {
    throw AbiViolation(fmt::format("variant {} assumes EVEN_K but K={} is not a multiple of BLOCK_K*SPLIT_K={}", v.id,
                                   k, block_k * split_k));
  }
  if (role == KernelRole::expand) {
    if (const std::optional<bool> add = v.constexprs.boolean("ADD_INPUTS"); add && *add != p.add_inputs) {
      throw AbiViolation(fmt::format("variant {} has ADD_INPUTS={} but the case has add_inputs={}", v.id, *add,
                                     p.add_inputs));
    }
    const bool same = std::adjacent_find(p.slice_hidden.begin(), p.slice_hidden.end(), std::not_equal_to<>()) ==
                      p.slice_hidden.end();
    if (v.constexprs.boolean("SAME_STRIDE").value_or(true) && !same) {
      throw AbiViolation(fmt::format("variant {} assumes SAME_STRIDE but the slices differ in width", v.id));
    }
  }
  if (role == KernelRole::shrink && split_k != p.split_k) {
    throw AbiViolation(fmt::format("variant {} has SPLIT_K={} but the case has split_k={}", v.id, split_k, p.split_k));
  }
}

}  // namespace

PreparedLaunch::PreparedLaunch(const kernels::Variant& v, KernelRole role, const Problem& problem,
                               const LoraMetadata& metadata, CaseBuffers& buffers, const Stream& stream) {
  if (!v.ok()) {
    throw AbiViolation(fmt::format("variant {} was rejected when the set was generated: {}", v.id, v.reason));
  }
  check_constexprs(v, role, problem);
  const Arguments args(role, problem, metadata, buffers);
  const auto& spec = v.specialization;
  // Arguments folded to the constant 1 are not passed, but the case must agree.
  for (const std::string& name : spec.equal_to_1) {
    const Value value = args.value(name, false);
    if (!std::holds_alternative<Integer>(value) || std::get<Integer>(value).value != 1) {
      throw AbiViolation(fmt::format("variant {} was compiled with {}=1, which this case does not have", v.id, name));
    }
  }
  const std::size_t n = v.params.size();
  if (n < 2 || v.params[n - 2].name != kernels::k_global_scratch || v.params[n - 1].name != kernels::k_profile_scratch) {
    throw AbiViolation(fmt::format("variant {}: the last two parameters are not Triton's scratch pointers", v.id));
  }
  // Grid first: scratch is sized per program.
  std::int64_t programs = 1;
  for (std::size_t d = 0; d < 3; ++d) {
    std::int64_t extent = 1;
    for (const AxisValue& factor : v.grid[d]) {
      extent *= grid_factor(factor, v, problem, metadata, buffers);
    }
    const std::int64_t limit = d == 0 ? std::numeric_limits<std::int32_t>::max() : 65535;
    if (extent < 1 || extent > limit) {
      throw AbiViolation(fmt::format("variant {}: grid dimension {} would be {}, outside [1, {}]", v.id, d, extent, limit));
    }
    m_config.grid[d] = static_cast<unsigned>(extent);
    programs *= extent;
  }
  for (std::size_t d = 0; d < 3; ++d) {
    m_config.block[d] = static_cast<unsigned>(v.block[d]);
  }
  m_config.shared_bytes = static_cast<unsigned>(v.shared_bytes);

  m_storage.assign(n, 0);
  m_args.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    m_args[i] = &m_storage[i];
  }
  for (std::size_t i = 0; i + 2 < n; ++i) {
    const kernels::Param& param = v.params[i];
    const Value value = args.value(param.name, param.is_pointer());
    if (param.is_pointer()) {
      CUdeviceptr ptr = 0;
      if (const auto* tensor = std::get_if<Pointer>(&value)) {
        const bool index_array = param.type == "*i32";
        if (!index_array && param.type != triton_pointer_type(tensor->dtype)) {
          throw AbiViolation(fmt::format("variant {} takes {} as {} but the case's tensor is {}", v.id, param.name,
                                         param.type, triton_pointer_type(tensor->dtype)));
        }
        ptr = tensor->value;
      } else if (const auto* u64 = std::get_if<U64Array>(&value)) {
        m_arrays.push_back(upload(std::span<const std::uint64_t>(u64->values), stream));
        ptr = m_arrays.back().get();
      } else if (const auto* i64 = std::get_if<I64Array>(&value)) {
        m_arrays.push_back(upload(std::span<const std::int64_t>(i64->values), stream));
        ptr = m_arrays.back().get();
      } else {
        throw AbiViolation(fmt::format("variant {} takes {} as a pointer, the launcher has a scalar", v.id, param.name));
      }
      if (contains(spec.aligned_16, param.name) && ptr % 16 != 0) {
        throw AbiViolation(fmt::format("variant {} assumes {} is 16-byte aligned; it is at 0x{:x}", v.id, param.name, ptr));
      }
      m_storage[i] = ptr;
      continue;
    }
    if (param.type == "fp32") {
      const auto* f = std::get_if<Float>(&value);
      if (f == nullptr) {
        throw AbiViolation(fmt::format("variant {} takes {} as fp32, the launcher has another kind", v.id, param.name));
      }
      std::memcpy(&m_storage[i], &f->value, sizeof(float));
      continue;
    }
    const auto* integer = std::get_if<Integer>(&value);
    if (integer == nullptr || param.type != "i32") {
      throw AbiViolation(fmt::format("variant {} takes {} as {}, the launcher has another kind", v.id, param.name,
                                     param.type));
    }
    if (integer->value < std::numeric_limits<std::int32_t>::min() ||
        integer->value > std::numeric_limits<std::int32_t>::max()) {
      throw AbiViolation(fmt::format("{}={} does not fit the variant's i32 parameter", param.name, integer->value));
    }
    if (contains(spec.divisible_by_16, param.name) && integer->value % 16 != 0) {
      throw AbiViolation(fmt::format("variant {} assumes {} is divisible by 16; the case has {}={}", v.id, param.name,
                                     param.name, integer->value));
    }
    const auto as32 = static_cast<std::int32_t>(integer->value);
    std::memcpy(&m_storage[i], &as32, sizeof(as32));
  }
  // Triton's scratch: size per program times the number of programs, or null.
  const std::int64_t sizes[2] = {v.global_scratch_size, v.profile_scratch_size};
  for (std::size_t k = 0; k < 2; ++k) {
    if (sizes[k] > 0) {
      m_arrays.emplace_back(static_cast<std::size_t>(sizes[k] * programs));
      m_storage[n - 2 + k] = m_arrays.back().get();
    }
  }
}

void PreparedLaunch::launch(CUfunction fn, const Stream& stream, bool programmatic) {
  if (m_config.shared_bytes > 48 * 1024) {
    set_max_dynamic_shared(fn, static_cast<int>(m_config.shared_bytes));
  }
  if (programmatic) {
    launch_kernel_programmatic(fn, m_config, m_args.data(), stream.get());
  } else {
    launch_kernel(fn, m_config, m_args.data(), stream.get());
  }
}

}  // namespace lp::worker
