#include "families/shrink/shrink_device.hpp"

#include "families/device_rules.hpp"

namespace lp {
namespace {

using namespace family_rules;
using namespace launch_value;

class ShrinkDevice final : public DeviceFamily {
 public:
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    CaseBuffers b;
    add_shrink_inputs(b, p, stream);
    b.buf = DeviceBuffer(elements({p.num_slices(), p.num_tokens, p.rank}) * sizeof(float), stream);  // the output
    b.reference = DeviceBuffer(b.buf.bytes(), stream);
    upload_metadata(b, p, m, stream);
    return b;
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers&,
                                    const Stream& stream) const override {
    Workspace w;
    add_shrink_workspace(w, p, m, stream);
    return w;
  }

  void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    reference_shrink(p, m, b, w, typed<float>(b.reference), stream, cublas);
  }

  [[nodiscard]] std::optional<LaunchValue> argument(const LaunchInputs& in, const std::string& name,
                                                    bool pointer_form) const override {
    const Problem& p = in.problem;
    const CaseBuffers& b = in.buffers;
    const std::int64_t R = p.rank;
    const std::int64_t H = p.hidden_in;
    if (name == "input_ptr") {
      return Pointer{b.x.get(), p.weight_dtype};
    }
    if (name == "lora_ptr") {
      return slice_pointers(b.lora_a, p.weight_dtype, pointer_form);
    }
    if (name == "out_ptr") {
      return Pointer{b.buf.get(), DType::f32};
    }
    if (name == "scaling") {
      return Float{p.scale};
    }
    const std::pair<const char*, std::int64_t> integers[] = {
        {"N", R},           {"K", H},                    {"input_d0_stride", H},  {"lora_d1_stride", H},
        {"lora_d0_stride", R * H}, {"output_d0_stride", p.num_tokens * R}, {"output_d1_stride", R},
        {"input_d1_stride", 1},   {"lora_d2_stride", 1},    {"output_d2_stride", 1}};
    for (const auto& [integer, value] : integers) {
      if (name == integer) {
        return Integer{value};
      }
    }
    return std::nullopt;
  }

  void check_variant(const kernels::Variant& v, const Problem& p) const override {
    check_slices_and_even_k(v, p, p.hidden_in);
    const std::int64_t split_k = constexpr_int(v, "SPLIT_K", 1);
    if (split_k != p.split_k) {
      throw AbiViolation(
          fmt::format("variant {} has SPLIT_K={} but the case has split_k={}", v.id, split_k, p.split_k));
    }
  }
};

}  // namespace

const DeviceFamily& shrink_device() noexcept {
  static const ShrinkDevice family;
  return family;
}

}  // namespace lp
