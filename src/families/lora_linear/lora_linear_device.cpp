#include "families/lora_linear/lora_linear_device.hpp"

#include "families/rules.hpp"

namespace lp {
namespace {

// Its kernels are a shrink and an expand (their device halves give their arguments);
// this half owns the buffers they share and the chained reference.
class LoraLinearDevice final : public DeviceFamily {
 public:
  [[nodiscard]] CaseBuffers make_buffers(const Problem& p, const LoraMetadata& m,
                                         const Stream& stream) const override {
    CaseBuffers b;
    add_shrink_inputs(b, p, stream);
    add_expand_tensors(b, p, stream);
    // buf [S, T, R] fp32: the intermediate the shrink kernel writes and the expand reads.
    b.buf = DeviceBuffer(elements({p.num_slices(), p.num_tokens, p.rank}) * sizeof(float), stream);
    b.reference = DeviceBuffer(b.y.bytes(), stream);
    upload_metadata(b, p, m, stream);
    return b;
  }

  // The intermediate buf starts like a shrink output: poisoned so that a shrink
  // kernel that skips elements feeds NaN into the expand (and is caught in y), or
  // zero when SPLIT_K > 1 needs it.
  void reset_output(const Problem& p, CaseBuffers& b, const Stream& stream) const override {
    if (p.split_k > 1) {
      b.buf.fill_u32(0, stream);
    } else {
      fill_poison(b.buf, DType::f32, stream);
    }
    reset_output_tensor(p, b, stream);
  }

  [[nodiscard]] Workspace workspace(const Problem& p, const LoraMetadata& m, const CaseBuffers&,
                                    const Stream& stream) const override {
    Workspace w;
    add_shrink_workspace(w, p, m, stream);
    w.intermediate =
        DeviceBuffer(workspace_bytes(p.num_slices() * p.num_tokens, p.rank, sizeof(float)), stream);
    add_expand_workspace(w, p, m, a_operand_dtype(p), stream);
    return w;
  }

  void reference(const Problem& p, const LoraMetadata& m, CaseBuffers& b, Workspace& w, const CublasHandle& cublas,
                 const Stream& stream) const override {
    // Rows of tokens without a LoRA stay unset in the intermediate: the expand never reads them.
    reference_shrink(p, m, b, w, typed<float>(w.intermediate), stream, cublas);
    reference_expand(p, m, b, w, w.intermediate.raw(), DType::f32, b.reference, stream, cublas);
  }
};

}  // namespace

const DeviceFamily& lora_linear_device() noexcept {
  static const LoraLinearDevice family;
  return family;
}

}  // namespace lp
