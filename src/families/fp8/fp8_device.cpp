#include "families/fp8/fp8_device.hpp"

#include <utility>

#include "families/device_rules.hpp"
#include "families/fp8/fp8.hpp"
#include "model/value_range.hpp"
#include "verify/inputs.hpp"

namespace lp {
namespace {

using namespace family_rules;
using namespace launch_value;

ScaleGrid grid_of(const Fp8Operand& o) {
  return ScaleGrid{o.batch, o.rows, o.cols, o.group_rows(), o.group_cols()};
}

/// The block-wise weight scales get two N-group rows more than they hold: the kernel (as
/// vLLM's) takes a masked column's N group without wrapping it, so where H is not a
/// multiple of BLOCK_N the last adapter's tile reads up to cdiv(BLOCK_N, g) <= 2 rows
/// past its scales (values it never uses); the padding keeps that read inside the buffer.
std::size_t scale_bytes(const Fp8Operand& o, const ScaleGrid& grid) {
  const std::int64_t k_groups = (o.cols + grid.group_cols - 1) / grid.group_cols;
  const std::int64_t padding = !o.activation && o.group > 0 ? 2 * k_groups : 0;
  return static_cast<std::size_t>(grid.scales() + padding) * sizeof(float);
}

/// One FP8 operand: `q` generated in `range` and rounded to fp8e4m3 (inputs.hpp), its
/// power-of-two scales, and `deq` = q * scale in `t`, exact, for the reference.
void make_operand(const Fp8Operand& o, ValueRange range, std::uint64_t seed, std::uint32_t tensor, DType t,
                  DeviceBuffer& q, DeviceBuffer& scales, DeviceBuffer& deq, const Stream& stream) {
  const std::size_t n = elements({o.batch, o.rows, o.cols});
  q = DeviceBuffer(n * dtype_size(DType::e4m3), stream);
  fill_generated(q, DType::e4m3, range, seed, tensor, stream);
  const ScaleGrid grid = grid_of(o);
  scales = DeviceBuffer(scale_bytes(o, grid), stream);
  fill_scales(scales, grid, seed, tensor, stream);
  deq = DeviceBuffer(n * dtype_size(t), stream);
  dequantize_on_device(q, scales, grid, deq, t, stream);
}

/// The problem the cuBLAS reference computes: the same, on the dequantized operands.
Problem reference_problem(const Problem& p) {
  Problem deq = p;
  deq.input_dtype = dequantized_dtype(p, true);
  if (p.op == Op::shrink_fp8) {
    deq.weight_dtype = dequantized_dtype(p, false);
  }
  return deq;
}

std::int64_t cdiv(std::int64_t n, std::int64_t d) { return (n + d - 1) / d; }

/// The scales' strides, as vLLM passes them (lora_*_fp8_op.py): per tensor 0 but for
/// the weights' L and N strides (1: a [L] tensor); block-wise, the contiguous
/// [T, cdiv(K, g)] and [L, cdiv(N, g), cdiv(K, g)] tensors'.
std::optional<LaunchValue> scale_stride(const Problem& p, const std::string& name) {
  const Fp8Operand w = fp8_weights(p);
  const std::int64_t g = p.scale_group;
  const std::int64_t k_groups = g > 0 ? cdiv(w.cols, g) : 0;
  const std::int64_t n_groups = g > 0 ? cdiv(w.rows, g) : 0;
  const std::pair<const char*, std::int64_t> strides[] = {
      {"a_scale_m_stride", k_groups},
      {"a_scale_k_stride", g > 0 ? 1 : 0},
      {"b_scale_l_stride", g > 0 ? n_groups * k_groups : 1},
      {"b_scale_n_stride", g > 0 ? k_groups : 1},
      {"b_scale_k_stride", g > 0 ? 1 : 0}};
  for (const auto& [stride, value] : strides) {
    if (name == stride) {
      return Integer{value};
    }
  }
  return std::nullopt;
}

/// The operands and scales both kernels take by the same names.
std::optional<LaunchValue> fp8_pointer(const CaseBuffers& b, const std::string& name) {
  if (name == "input_ptr") {
    return Pointer{b.fp8_activation.get(), DType::e4m3};
  }
  if (name == "lora_ptr") {
    return Pointer{b.fp8_weights.get(), DType::e4m3};
  }
  if (name == "a_scale_ptr") {
    return Pointer{b.activation_scale.get(), DType::f32};
  }
  if (name == "b_scale_ptr") {
    return Pointer{b.weight_scale.get(), DType::f32};
  }
  return std::nullopt;
}

/// The variant's scale constexprs equal the case's group (group_n = group_k).
void check_scales(const kernels::Variant& v, const Problem& p) {
  for (const char* name : {"group_n", "group_k"}) {
    const std::int64_t group = constexpr_int(v, name, -1);
    if (group != p.scale_group) {
      throw AbiViolation(fmt::format("variant {} has {}={} but the case has scale_group {}", v.id, name, group,
                                     p.scale_group));
    }
  }
}

std::optional<LaunchValue> integer_named(const std::string& name,
                                         std::initializer_list<std::pair<const char*, std::int64_t>> integers) {
  for (const auto& [integer, value] : integers) {
    if (name == integer) {
      return Integer{value};
    }
  }
  return std::nullopt;
}

class ShrinkFp8Device final : public DeviceFamily {
 public:
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    CaseBuffers b;
    const DType deq = dequantized_dtype(p, true);
    make_operand(fp8_activation(p), k_activation_range, p.seed, tensor_id::x, deq, b.fp8_activation,
                 b.activation_scale, b.x, stream);
    b.lora_a.emplace_back();
    make_operand(fp8_weights(p), k_weight_range, p.seed, tensor_id::lora_a(0), deq, b.fp8_weights, b.weight_scale,
                 b.lora_a[0], stream);
    b.buf = DeviceBuffer(elements({p.num_tokens, p.rank}) * sizeof(float), stream);  // the output
    b.reference = DeviceBuffer(b.buf.bytes(), stream);
    upload_metadata(b, p, m, stream);
    return b;
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers&,
                                    const Stream& stream) const override {
    Workspace w;
    add_shrink_workspace(w, reference_problem(p), m, stream);
    return w;
  }

  void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    reference_shrink(reference_problem(p), m, b, w, typed<float>(b.reference), stream, cublas);
  }

  [[nodiscard]] std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                    bool) const override {
    const Problem& p = in.problem;
    if (std::optional<LaunchValue> v = fp8_pointer(in.buffers, name)) {
      return v;
    }
    if (name == "out_ptr") {
      return Pointer{in.buffers.buf.get(), DType::f32};
    }
    if (name == "scaling") {
      return Float{p.scale};
    }
    if (std::optional<LaunchValue> v = scale_stride(p, name)) {
      return v;
    }
    const std::int64_t R = p.rank;
    const std::int64_t H = p.hidden_in;
    return integer_named(name, {{"N", R}, {"K", H}, {"input_d0_stride", H}, {"input_d1_stride", 1},
                                {"lora_d0_stride", R * H}, {"lora_d1_stride", H}, {"lora_d2_stride", 1},
                                {"output_d0_stride", p.num_tokens * R}, {"output_d1_stride", R},
                                {"output_d2_stride", 1}});
  }

  void check_variant(const kernels::Variant& v, const Problem& p) const override {
    check_slices_and_even_k(v, p, p.hidden_in);
    check_scales(v, p);
    const std::int64_t split_k = constexpr_int(v, "SPLIT_K", 1);
    if (split_k != p.split_k) {
      throw AbiViolation(
          fmt::format("variant {} has SPLIT_K={} but the case has split_k={}", v.id, split_k, p.split_k));
    }
  }
};

class ExpandFp8Device final : public DeviceFamily {
 public:
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    CaseBuffers b;
    make_operand(fp8_activation(p), k_activation_range, p.seed, tensor_id::buf, dequantized_dtype(p, true),
                 b.fp8_activation, b.activation_scale, b.buf, stream);
    b.lora_b.emplace_back();
    make_operand(fp8_weights(p), k_weight_range, p.seed, tensor_id::lora_b(0), dequantized_dtype(p, false),
                 b.fp8_weights, b.weight_scale, b.lora_b[0], stream);
    const std::size_t y_bytes = elements({p.num_tokens, p.hidden_total()}) * dtype_size(p.weight_dtype);
    b.y = DeviceBuffer(y_bytes, stream);
    if (p.add_inputs) {
      b.y_in = DeviceBuffer(y_bytes, stream);
      fill_generated(b.y_in, p.weight_dtype, k_activation_range, p.seed, tensor_id::y_in, stream);
    }
    b.reference = DeviceBuffer(y_bytes, stream);
    upload_metadata(b, p, m, stream);
    return b;
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers&,
                                    const Stream& stream) const override {
    Workspace w;
    add_expand_workspace(w, reference_problem(p), m, dequantized_dtype(p, true), stream);
    return w;
  }

  void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    reference_expand(reference_problem(p), m, b, w, b.buf.raw(), dequantized_dtype(p, true), b.reference, stream,
                     cublas);
  }

  [[nodiscard]] std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                    bool) const override {
    const Problem& p = in.problem;
    if (std::optional<LaunchValue> v = fp8_pointer(in.buffers, name)) {
      return v;
    }
    if (name == "out_ptr") {
      return Pointer{in.buffers.y.get(), p.weight_dtype};
    }
    if (std::optional<LaunchValue> v = scale_stride(p, name)) {
      return v;
    }
    const std::int64_t R = p.rank;
    const std::int64_t H = p.slice_hidden.at(0);
    return integer_named(name, {{"N", H}, {"K", R}, {"slice_start_loc", 0}, {"input_d0_stride", p.num_tokens * R},
                                {"input_d1_stride", R}, {"input_d2_stride", 1}, {"ls_d0_ptr", H * R},
                                {"ls_d1_ptr", R}, {"ls_d2_ptr", 1}, {"output_d0_stride", H},
                                {"output_d1_stride", 1}, {"output_hs_ptr", H}});
  }

  void check_variant(const kernels::Variant& v, const Problem& p) const override {
    check_slices_and_even_k(v, p, p.rank);
    check_scales(v, p);
    if (const std::optional<bool> add = v.constexprs.boolean("ADD_INPUTS"); add && *add != p.add_inputs) {
      throw AbiViolation(fmt::format("variant {} has ADD_INPUTS={} but the case has add_inputs={}", v.id, *add,
                                     p.add_inputs));
    }
  }
};

}  // namespace

const DeviceFamily& shrink_fp8_device() noexcept {
  static const ShrinkFp8Device family;
  return family;
}

const DeviceFamily& expand_fp8_device() noexcept {
  static const ExpandFp8Device family;
  return family;
}

}  // namespace lp
