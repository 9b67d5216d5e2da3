#include "families/fp8/fp8.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "families/expand/expand.hpp"
#include "families/rules.hpp"
#include "families/shrink/shrink.hpp"

namespace lp {
namespace {

using namespace family_rules;

/// The rules both FP8 families share: fp8e4m3 operands, one slice, no routing, no
/// amplifier (their A operand never passes through registers), and a scale group of
/// 0 or a power of two.
void check_fp8(const Problem& p, const Fail& fail) {
  if (p.input_dtype != DType::e4m3) {
    fail(fmt::format("input dtype {} is not fp8e4m3", dtype_name(p.input_dtype)));
  }
  if (p.num_slices() != 1) {
    fail(fmt::format("{} slices, but the FP8 kernels loraprobe builds take one", p.num_slices()));
  }
  if (p.scale_group < 0 || (p.scale_group > 0 && (p.scale_group & (p.scale_group - 1)) != 0)) {
    fail(fmt::format("scale_group {} is neither 0 (per-tensor scales) nor a power of two", p.scale_group));
  }
  check_no_routing(p, fail);
  check_amplify(p, false, fail);
}

std::string scales_text(const Problem& p) {
  return p.scale_group == 0 ? std::string(" per-tensor") : fmt::format(" g{}", p.scale_group);
}

/// The bytes of an operand in fp8 and of its scales.
std::uint64_t fp8_bytes(const Fp8Operand& o) {
  return sum({mul({u(o.batch), u(o.rows), u(o.cols)}), mul({u(o.scales()), 4})});
}

class ShrinkFp8 final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::shrink_fp8; }
  [[nodiscard]] std::string_view name() const noexcept override { return "shrink_fp8"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override {
    p.input_dtype = DType::e4m3;
    p.weight_dtype = DType::e4m3;
    p.add_inputs = false;
  }

  void check(const Problem& p, const Fail& fail) const override {
    check_fp8(p, fail);
    check_reads_x(p, fail);
    if (p.add_inputs) {
      fail("add_inputs given, but shrink_fp8 writes buf, it does not add into y");
    }
    if (!p.slice_hidden.empty() && p.slice_hidden[0] != p.hidden_in) {
      fail(fmt::format("slice_hidden[0] = {} differs from hidden_in {}", p.slice_hidden[0], p.hidden_in));
    }
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return shrink_describe(p, fmt::format("fp8e4m3->fp32{}", scales_text(p)));
  }
  [[nodiscard]] DType output_dtype(const Problem&) const noexcept override { return DType::f32; }
  [[nodiscard]] bool writes_buf() const noexcept override { return true; }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    const auto k = static_cast<double>(p.hidden_in);
    const double scale = std::abs(static_cast<double>(p.scale));
    return with_fp8_accumulation(fp32_output_tolerance(k, scale, p.split_k), k, scale);
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting*) const override {
    return shrink_traffic(p, m);  // x and A at one byte an element, buf in fp32; scales not counted
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const Fp8Operand x = fp8_activation(p);
    const Fp8Operand a = fp8_weights(p);
    const std::uint64_t bf16 = dtype_size(DType::bf16);
    const std::uint64_t buf = mul({u(p.num_tokens), u(p.rank), 4});
    // the fp8 operands and scales, their bf16 copies, buf and its reference
    return with_reference_scratch(sum({fp8_bytes(x), fp8_bytes(a), mul({u(x.rows), u(x.cols), bf16}),
                                       mul({u(a.batch), u(a.rows), u(a.cols), bf16}), buf, buf,
                                       mul({4, u(p.num_tokens), 4})}));
  }

  [[nodiscard]] std::span<const std::string_view> kernel_arguments() const noexcept override { return k_arguments; }

 private:
  // _lora_shrink_kernel_fp8's runtime arguments (kernels/triton/lora_fp8.py), in order.
  static constexpr std::array<std::string_view, 26> k_arguments = {
      "input_ptr",        "lora_ptr",         "out_ptr",          "a_scale_ptr",
      "b_scale_ptr",      "M",                "N",                "K",
      "token_indices_sorted_by_lora_ids",     "num_tokens_per_lora",
      "lora_token_start_loc",                 "lora_ids",         "scaling",
      "input_d0_stride",  "input_d1_stride",  "lora_d0_stride",   "lora_d1_stride",
      "lora_d2_stride",   "a_scale_m_stride", "a_scale_k_stride", "b_scale_l_stride",
      "b_scale_n_stride", "b_scale_k_stride", "output_d0_stride", "output_d1_stride",
      "output_d2_stride"};
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "",
                                         .input_dtype_axis = false,
                                         .input_is_weight_dtype = false,
                                         .add_inputs_axis = false,
                                         .gdc_axis = false,
                                         .shrink_knobs = true,
                                         .expand_knobs = false,
                                         .one_hidden_why = "",
                                         .register_a_remedies = false,
                                         .fixed_input_dtype = DType::e4m3,
                                         .fixed_weight_dtype = DType::e4m3,
                                         .scale_group_axis = true};
  static constexpr std::array<KernelLaunch, 1> k_kernels{{{Op::shrink_fp8, ImageSlot::shrink}}};
};

class ExpandFp8 final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::expand_fp8; }
  [[nodiscard]] std::string_view name() const noexcept override { return "expand_fp8"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override {
    p.input_dtype = DType::e4m3;
    p.hidden_in = 0;
    p.scale = 1.0F;
  }

  void check(const Problem& p, const Fail& fail) const override {
    check_fp8(p, fail);
    if (p.scale != 1.0f) {
      fail(fmt::format("scale {} given, but expand_fp8 has no scale (the shrink applies it)", p.scale));
    }
    if (p.split_k != 1) {
      fail(fmt::format("split_k {} given, but only a shrink splits K", p.split_k));
    }
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return fmt::format(" L={} fp8e4m3->{}{}{}", p.num_loras, dtype_name(p.weight_dtype),
                       p.add_inputs ? " add_inputs" : "", scales_text(p));
  }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    return with_fp8_accumulation(w_output_tolerance(WOutputShape{p.weight_dtype, p.rank, 0, p.add_inputs, 0, 1.0}),
                                 static_cast<double>(p.rank), 1.0);
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting*) const override {
    // buf and B of the LoRAs in use at one byte an element, y written (and read with
    // ADD_INPUTS) in W; the scales, as the metadata, are not counted
    const auto live = static_cast<std::uint64_t>(m.live_tokens());
    const auto used = static_cast<std::uint64_t>(m.used_loras());
    const std::uint64_t h = hidden_total(p);
    const std::uint64_t w = dtype_size(p.weight_dtype);
    return sum({mul({live, u(p.rank)}), mul({used, h, u(p.rank)}), mul({live, h, w}),
                p.add_inputs ? mul({live, h, w}) : 0});
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const Fp8Operand buf = fp8_activation(p);
    const Fp8Operand b = fp8_weights(p);
    // the fp8 operands and scales, the fp32 buf the reference reads; B in W, y, y_in and
    // the reference (expand_tensor_bytes)
    return with_reference_scratch(sum({fp8_bytes(buf), fp8_bytes(b), mul({u(buf.rows), u(buf.cols), 4}),
                                       expand_tensor_bytes(p), mul({4, u(p.num_tokens), 4})}));
  }

  [[nodiscard]] std::span<const std::string_view> kernel_arguments() const noexcept override { return k_arguments; }

 private:
  // _lora_expand_kernel_fp8's runtime arguments (kernels/triton/lora_fp8.py), in order.
  static constexpr std::array<std::string_view, 27> k_arguments = {
      "input_ptr",        "lora_ptr",         "out_ptr",          "a_scale_ptr",
      "b_scale_ptr",      "M",                "N",                "K",
      "token_indices_sorted_by_lora_ids",     "num_tokens_per_lora",
      "lora_token_start_loc",                 "lora_ids",         "slice_start_loc",
      "input_d0_stride",  "input_d1_stride",  "input_d2_stride",  "ls_d0_ptr",
      "ls_d1_ptr",        "ls_d2_ptr",        "a_scale_m_stride", "a_scale_k_stride",
      "b_scale_l_stride", "b_scale_n_stride", "b_scale_k_stride", "output_d0_stride",
      "output_d1_stride", "output_hs_ptr"};
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "",
                                         .input_dtype_axis = false,
                                         .input_is_weight_dtype = false,
                                         .add_inputs_axis = true,
                                         .gdc_axis = false,
                                         .shrink_knobs = false,
                                         .expand_knobs = true,
                                         .one_hidden_why = "",
                                         .register_a_remedies = false,
                                         .fixed_input_dtype = DType::e4m3,
                                         .fixed_weight_dtype = std::nullopt,
                                         .scale_group_axis = true};
  static constexpr std::array<KernelLaunch, 1> k_kernels{{{Op::expand_fp8, ImageSlot::expand}}};
};

}  // namespace

const KernelFamily& shrink_fp8_family() noexcept {
  static const ShrinkFp8 family;
  return family;
}

const KernelFamily& expand_fp8_family() noexcept {
  static const ExpandFp8 family;
  return family;
}

Fp8Operand fp8_activation(const Problem& p) noexcept {
  const bool shrink = p.op == Op::shrink_fp8;
  return Fp8Operand{1, p.num_tokens, shrink ? p.hidden_in : p.rank, true, p.scale_group};
}

Fp8Operand fp8_weights(const Problem& p) noexcept {
  const bool shrink = p.op == Op::shrink_fp8;
  const std::int64_t n = shrink ? p.rank : (p.slice_hidden.empty() ? 0 : p.slice_hidden[0]);
  return Fp8Operand{p.num_loras, n, shrink ? p.hidden_in : p.rank, false, p.scale_group};
}

DType dequantized_dtype(const Problem& p, bool activation) noexcept {
  if (p.op == Op::expand_fp8) {
    return activation ? DType::f32 : p.weight_dtype;
  }
  return DType::bf16;
}

}  // namespace lp
