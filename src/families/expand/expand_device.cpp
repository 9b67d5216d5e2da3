#include "families/expand/expand_device.hpp"

#include <algorithm>

#include "families/device_rules.hpp"
#include "verify/inputs.hpp"

namespace lp {
namespace {

using namespace family_rules;
using namespace launch_value;

class ExpandDevice final : public DeviceFamily {
 public:
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    CaseBuffers b;
    add_expand_tensors(b, p, stream);
    // buf [S, T, R], the expand's input in dtype I, generated.
    b.buf = DeviceBuffer(elements({p.num_slices(), p.num_tokens, p.rank}) * dtype_size(p.input_dtype), stream);
    fill_generated(b.buf, p.input_dtype, k_activation_range, p.seed, tensor_id::buf, stream);
    b.reference = DeviceBuffer(b.y.bytes(), stream);
    upload_metadata(b, p, m, stream);
    return b;
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers&,
                                    const Stream& stream) const override {
    Workspace w;
    add_expand_workspace(w, p, m, a_operand_dtype(p), stream);
    return w;
  }

  void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    reference_expand(p, m, b, w, b.buf.raw(), p.input_dtype, b.reference, stream, cublas);
  }

  [[nodiscard]] std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                    bool pointer_form) const override {
    const Problem& p = in.problem;
    const CaseBuffers& b = in.buffers;
    const std::int64_t R = p.rank;
    const auto& H = p.slice_hidden;
    if (name == "input_ptr") {
      return Pointer{b.buf.get(), a_operand_dtype(p)};
    }
    if (name == "lora_ptr") {
      return slice_pointers(b.lora_b, p.weight_dtype, pointer_form);
    }
    if (name == "out_ptr") {
      return Pointer{b.y.get(), p.weight_dtype};
    }
    if (name == "N") {
      return Integer{*std::max_element(H.begin(), H.end())};
    }
    if (name == "K") {
      return Integer{R};
    }
    if (name == "slice_start_loc") {
      if (!pointer_form) {
        return Integer{0};
      }
      U64Array a;
      for (const std::int64_t off : p.slice_offsets()) {
        a.values.push_back(static_cast<std::uint64_t>(off));
      }
      return a;
    }
    if (name == "input_d0_stride") {
      return Integer{p.num_tokens * R};
    }
    if (name == "input_d1_stride") {
      return Integer{R};
    }
    if (name == "input_d2_stride" || name == "output_d1_stride") {
      return Integer{1};
    }
    if (name == "output_d0_stride") {
      return Integer{p.hidden_total()};
    }
    return per_slice_stride(p, name, pointer_form);
  }

  void check_variant(const kernels::Variant& v, const Problem& p) const override {
    check_slices_and_even_k(v, p, p.rank);
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

 private:
  // The B strides and output widths per slice: one value, or an array of every slice's.
  static std::optional<LaunchValue> per_slice_stride(const Problem& p, const std::string& name, bool pointer_form) {
    const std::int64_t R = p.rank;
    std::int64_t (*per_slice)(std::int64_t, std::int64_t) = nullptr;
    if (name == "ls_d0_ptr") {
      per_slice = [](std::int64_t h, std::int64_t r) { return h * r; };
    } else if (name == "ls_d1_ptr") {
      per_slice = [](std::int64_t, std::int64_t r) { return r; };
    } else if (name == "ls_d2_ptr") {
      per_slice = [](std::int64_t, std::int64_t) -> std::int64_t { return 1; };
    } else if (name == "output_hs_ptr") {
      per_slice = [](std::int64_t h, std::int64_t) { return h; };
    } else {
      return std::nullopt;
    }
    if (!pointer_form) {
      return Integer{per_slice(p.slice_hidden.at(0), R)};
    }
    I64Array a;
    for (const std::int64_t h : p.slice_hidden) {
      a.values.push_back(per_slice(h, R));
    }
    return a;
  }
};

}  // namespace

const DeviceFamily& expand_device() noexcept {
  static const ExpandDevice family;
  return family;
}

}  // namespace lp
