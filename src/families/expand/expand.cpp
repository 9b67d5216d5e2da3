#include "families/expand/expand.hpp"

#include <array>

#include <fmt/format.h>

#include "families/rules.hpp"

namespace lp {
namespace {

using namespace family_rules;

class Expand final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::expand; }
  [[nodiscard]] std::string_view name() const noexcept override { return "expand"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override {
    p.hidden_in = 0;
    p.scale = 1.0F;
  }

  void check(const Problem& p, const Fail& fail) const override {
    if (p.input_dtype != DType::f32 && p.input_dtype != DType::bf16 && p.input_dtype != DType::f16) {
      fail(fmt::format("input dtype {} is not fp32, bf16 or fp16", dtype_name(p.input_dtype)));
    }
    if (p.scale != 1.0f) {
      fail(fmt::format("scale {} given, but expand has no scale (shrink applies it)", p.scale));
    }
    if (p.split_k != 1) {
      fail(fmt::format("split_k {} given, but only shrink splits K", p.split_k));
    }
    check_no_routing(p, fail);
    check_amplify(p, true, fail);
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return fmt::format(" L={} {}->{}{}", p.num_loras, dtype_name(p.input_dtype), dtype_name(p.weight_dtype),
                       p.add_inputs ? " add_inputs" : "");
  }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    return w_output_tolerance(WOutputShape{p.weight_dtype, p.rank, p.amplify, p.add_inputs, 0, 1.0});
  }

  [[nodiscard]] std::vector<ToleranceRow> tolerance_rows() const override {
    std::vector<ToleranceRow> rows;
    for (const DType w : {DType::bf16, DType::f16}) {
      for (const std::int64_t rank : {16, 64, 256, 1024}) {
        for (const bool add_inputs : {false, true}) {
          Problem p;
          p.op = Op::expand;
          p.num_tokens = 1;
          p.rank = rank;
          p.slice_hidden = {4096};
          p.input_dtype = DType::f32;
          p.weight_dtype = w;
          p.add_inputs = add_inputs;
          p.lora_of = {0};
          rows.push_back(ToleranceRow{p.op, w, rank, add_inputs, 0, tolerance_for(p)});
        }
      }
    }
    return rows;
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting*) const override {
    return expand_traffic(p, m);
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const std::uint64_t buf = mul({static_cast<std::uint64_t>(p.num_slices()), u(p.num_tokens), u(p.rank), 4});
    return with_reference_scratch(sum({buf, expand_tensor_bytes(p), mul({4, u(p.num_tokens), 4})}));
  }

  [[nodiscard]] std::span<const std::string_view> kernel_arguments() const noexcept override { return k_arguments; }

 private:
  // _lora_expand_kernel's runtime arguments (kernels/triton), in signature order.
  static constexpr std::array<std::string_view, 20> k_arguments = {
      "input_ptr",       "lora_ptr",        "out_ptr",         "M",
      "N",               "K",               "token_indices_sorted_by_lora_ids",
      "num_tokens_per_lora",                "lora_token_start_loc",
      "lora_ids",        "slice_start_loc", "input_d0_stride", "input_d1_stride",
      "input_d2_stride", "ls_d0_ptr",       "ls_d1_ptr",       "ls_d2_ptr",
      "output_d0_stride", "output_d1_stride", "output_hs_ptr"};
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "",
                                         .input_dtype_axis = true,
                                         .input_is_weight_dtype = false,
                                         .add_inputs_axis = true,
                                         .gdc_axis = false,
                                         .shrink_knobs = false,
                                         .expand_knobs = true,
                                         .one_hidden_why = "",
                                         .register_a_remedies = true,
                                         .fixed_input_dtype = std::nullopt,
                                         .fixed_weight_dtype = std::nullopt,
                                         .scale_group_axis = false};
  static constexpr std::array<KernelLaunch, 1> k_kernels{{{Op::expand, ImageSlot::expand}}};
};

}  // namespace

const KernelFamily& expand_family() noexcept {
  static const Expand family;
  return family;
}

std::uint64_t expand_traffic(const Problem& p, const LoraMetadata& m) {
  const auto live = static_cast<std::uint64_t>(m.live_tokens());
  const auto used = static_cast<std::uint64_t>(m.used_loras());
  const auto slices = static_cast<std::uint64_t>(p.num_slices());
  const auto rank = static_cast<std::uint64_t>(p.rank);
  const auto h_tot = static_cast<std::uint64_t>(p.hidden_total());
  const std::uint64_t w = dtype_size(p.weight_dtype);
  const std::uint64_t in = dtype_size(a_operand_dtype(p));
  return slices * live * rank * in     // buf read
         + used * h_tot * rank * w     // B of the LoRAs in use, every slice
         + live * h_tot * w            // y written
         + (p.add_inputs ? live * h_tot * w : 0);  // y read back for ADD_INPUTS
}

std::uint64_t expand_tensor_bytes(const Problem& p) {
  const std::uint64_t h_tot = hidden_total(p);
  const std::uint64_t w = dtype_size(p.weight_dtype);
  // B; y, y_in, reference
  return sum({mul({u(p.num_loras), h_tot, u(p.rank), w}), mul({3, u(p.num_tokens), h_tot, w})});
}

}  // namespace lp
