#include "families/lora_linear/lora_linear.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "families/expand/expand.hpp"
#include "families/rules.hpp"
#include "families/shrink/shrink.hpp"

namespace lp {
namespace {

using namespace family_rules;

class LoraLinear final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::lora_linear; }
  [[nodiscard]] std::string_view name() const noexcept override { return "lora_linear"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override { p.input_dtype = p.weight_dtype; }

  void check(const Problem& p, const Fail& fail) const override {
    check_reads_x(p, fail);
    check_no_routing(p, fail);
    check_amplify(p, true, fail);
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return shrink_describe(p, fmt::format("{}->fp32->{}", dtype_name(p.input_dtype), dtype_name(p.weight_dtype)));
  }
  [[nodiscard]] DType a_operand_dtype(const Problem&) const noexcept override { return DType::f32; }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    return w_output_tolerance(WOutputShape{p.weight_dtype, p.rank, p.amplify, p.add_inputs, p.hidden_in,
                                           std::abs(static_cast<double>(p.scale))});
  }

  [[nodiscard]] std::vector<ToleranceRow> tolerance_rows() const override {
    std::vector<ToleranceRow> rows;
    for (const DType w : {DType::bf16, DType::f16}) {
      for (const std::int64_t rank : {16, 64, 256}) {
        Problem p;
        p.op = Op::lora_linear;
        p.num_tokens = 1;
        p.rank = rank;
        p.hidden_in = 4096;
        p.slice_hidden = {4096};
        p.input_dtype = w;
        p.weight_dtype = w;
        p.lora_of = {0};
        rows.push_back(ToleranceRow{p.op, w, rank, false, 4096, tolerance_for(p)});
      }
    }
    return rows;
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting*) const override {
    return shrink_traffic(p, m) + expand_traffic(p, m);
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const std::uint64_t buf = mul({static_cast<std::uint64_t>(p.num_slices()), u(p.num_tokens), u(p.rank), 4});
    return with_reference_scratch(
        sum({shrink_tensor_bytes(p), buf, expand_tensor_bytes(p), mul({4, u(p.num_tokens), 4})}));
  }

 private:
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "",
                                         .input_dtype_axis = false,
                                         .input_is_weight_dtype = true,
                                         .add_inputs_axis = true,
                                         .gdc_axis = true,
                                         .shrink_knobs = true,
                                         .expand_knobs = true,
                                         .one_hidden_why = "lora_linear shrinks one x, so its slices share one hidden size",
                                         .register_a_remedies = false,
                                         .fixed_input_dtype = std::nullopt,
                                         .fixed_weight_dtype = std::nullopt,
                                         .scale_group_axis = false};
  static constexpr std::array<KernelLaunch, 2> k_kernels{
      {{Op::shrink, ImageSlot::shrink}, {Op::expand, ImageSlot::expand}}};
};

}  // namespace

const KernelFamily& lora_linear_family() noexcept {
  static const LoraLinear family;
  return family;
}

}  // namespace lp
