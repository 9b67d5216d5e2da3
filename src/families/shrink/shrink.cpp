#include "families/shrink/shrink.hpp"

#include <array>
#include <cmath>

#include <fmt/format.h>

#include "families/rules.hpp"

namespace lp {
namespace {

using namespace family_rules;

class Shrink final : public KernelFamily {
 public:
  [[nodiscard]] Op op() const noexcept override { return Op::shrink; }
  [[nodiscard]] std::string_view name() const noexcept override { return "shrink"; }
  [[nodiscard]] const FamilyTraits& traits() const noexcept override { return k_traits; }
  [[nodiscard]] std::span<const KernelLaunch> kernels() const noexcept override { return k_kernels; }

  void shape(Problem& p) const override {
    p.input_dtype = p.weight_dtype;
    p.add_inputs = false;
  }

  void check(const Problem& p, const Fail& fail) const override {
    check_reads_x(p, fail);
    check_no_routing(p, fail);
    check_amplify(p, false, fail);
    if (p.add_inputs) {
      fail("add_inputs given, but shrink writes buf, it does not add into y");
    }
    for (std::size_t s = 0; s < p.slice_hidden.size(); ++s) {
      if (p.slice_hidden[s] != p.hidden_in) {
        fail(fmt::format("slice_hidden[{}] = {} differs from hidden_in {}: every shrink slice reads the same x",
                         s, p.slice_hidden[s], p.hidden_in));
      }
    }
  }

  [[nodiscard]] std::string describe_rest(const Problem& p) const override {
    return shrink_describe(p, fmt::format("{}->{}", dtype_name(p.input_dtype), dtype_name(DType::f32)));
  }
  [[nodiscard]] DType output_dtype(const Problem&) const noexcept override { return DType::f32; }
  [[nodiscard]] bool writes_buf() const noexcept override { return true; }

  [[nodiscard]] Tolerance tolerance(const Problem& p) const override {
    return fp32_output_tolerance(static_cast<double>(p.hidden_in), std::abs(static_cast<double>(p.scale)),
                                 p.split_k);
  }

  [[nodiscard]] std::vector<ToleranceRow> tolerance_rows() const override {
    std::vector<ToleranceRow> rows;
    for (const std::int64_t hidden : {1024, 4096, 16384}) {
      Problem p;
      p.op = Op::shrink;
      p.num_tokens = 1;
      p.rank = 64;
      p.hidden_in = hidden;
      p.slice_hidden = {hidden};
      p.input_dtype = DType::bf16;
      p.weight_dtype = DType::bf16;
      p.lora_of = {0};
      rows.push_back(ToleranceRow{p.op, DType::f32, hidden, false, hidden, tolerance_for(p)});
    }
    return rows;
  }

  [[nodiscard]] std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                               const MoeRouting*) const override {
    return shrink_traffic(p, m);
  }

  [[nodiscard]] std::uint64_t device_bytes(const Problem& p) const override {
    const std::uint64_t buf = mul({static_cast<std::uint64_t>(p.num_slices()), u(p.num_tokens), u(p.rank), 4});
    // buf and its reference, both fp32
    return with_reference_scratch(sum({shrink_tensor_bytes(p), buf, buf, mul({4, u(p.num_tokens), 4})}));
  }

  [[nodiscard]] std::span<const std::string_view> kernel_arguments() const noexcept override { return k_arguments; }

 private:
  // _lora_shrink_kernel's runtime arguments (kernels/triton), in signature order.
  static constexpr std::array<std::string_view, 19> k_arguments = {
      "input_ptr",       "lora_ptr",        "out_ptr",        "M",
      "N",               "K",               "token_indices_sorted_by_lora_ids",
      "num_tokens_per_lora",                "lora_token_start_loc",
      "lora_ids",        "scaling",         "input_d0_stride", "input_d1_stride",
      "lora_d0_stride",  "lora_d1_stride",  "lora_d2_stride", "output_d0_stride",
      "output_d1_stride", "output_d2_stride"};
  static constexpr FamilyTraits k_traits{.off_op_axis_why = "",
                                         .input_dtype_axis = true,
                                         .input_is_weight_dtype = true,
                                         .add_inputs_axis = false,
                                         .gdc_axis = false,
                                         .shrink_knobs = true,
                                         .expand_knobs = false,
                                         .one_hidden_why = "shrink slices share one input x, so they share one hidden size",
                                         .register_a_remedies = false,
                                         .fixed_input_dtype = std::nullopt,
                                         .fixed_weight_dtype = std::nullopt,
                                         .scale_group_axis = false};
  static constexpr std::array<KernelLaunch, 1> k_kernels{{{Op::shrink, ImageSlot::shrink}}};
};

}  // namespace

const KernelFamily& shrink_family() noexcept {
  static const Shrink family;
  return family;
}

std::uint64_t shrink_traffic(const Problem& p, const LoraMetadata& m) {
  const auto live = static_cast<std::uint64_t>(m.live_tokens());
  const auto used = static_cast<std::uint64_t>(m.used_loras());
  const auto slices = static_cast<std::uint64_t>(p.num_slices());
  const auto rank = static_cast<std::uint64_t>(p.rank);
  const auto h_in = static_cast<std::uint64_t>(p.hidden_in);
  const std::uint64_t x = dtype_size(p.input_dtype);
  return live * h_in * x                 // x rows of live tokens
         + slices * used * rank * h_in * x  // A of the LoRAs in use
         + slices * live * rank * 4;        // buf written (fp32)
}

std::uint64_t shrink_tensor_bytes(const Problem& p) {
  const std::uint64_t w = dtype_size(p.weight_dtype);
  const std::uint64_t h_in = u(p.hidden_in);
  return sum({mul({u(p.num_tokens), h_in, w}),
              mul({static_cast<std::uint64_t>(p.num_slices()), u(p.num_loras), u(p.rank), h_in, w})});  // x, A
}

std::string shrink_describe(const Problem& p, std::string_view dtypes) {
  return fmt::format(" H_in={} L={} {}{} scale={} split_k={}", p.hidden_in, p.num_loras, dtypes,
                     p.add_inputs ? " add_inputs" : "", p.scale, p.split_k);
}

}  // namespace lp
