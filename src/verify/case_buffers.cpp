#include "verify/case_buffers.hpp"

#include <span>

#include "verify/inputs.hpp"
#include "verify/poison.hpp"
#include "util/error.hpp"

namespace lp {

std::size_t elements(std::initializer_list<std::int64_t> dims) {
  std::size_t n = 1;
  for (const std::int64_t d : dims) {
    n *= static_cast<std::size_t>(d);
  }
  return n;
}

DeviceBuffer upload_ints(const std::vector<std::int32_t>& values, const Stream& stream) {
  return upload(std::span<const std::int32_t>(values), stream);
}

void fill_poison(DeviceBuffer& buffer, DType t, const Stream& stream) {
  if (t == DType::f32) {
    buffer.fill_u32(poison_bits(t), stream);
  } else {
    buffer.fill_u16(static_cast<std::uint16_t>(poison_bits(t)), stream);
  }
}

void upload_metadata(CaseBuffers& b, const Problem& p, const LoraMetadata& m, const Stream& stream) {
  b.lora_of = upload_ints(p.lora_of, stream);
  b.lora_ids = upload_ints(m.lora_ids, stream);
  b.num_tokens_per_lora = upload_ints(m.num_tokens_per_lora, stream);
  b.lora_token_start_loc = upload_ints(m.lora_token_start_loc, stream);
  b.token_indices_sorted_by_lora_ids = upload_ints(m.token_indices_sorted_by_lora_ids, stream);
}

void add_shrink_inputs(CaseBuffers& b, const Problem& p, const Stream& stream) {
  const DType x_type = p.input_dtype;
  b.x = DeviceBuffer(elements({p.num_tokens, p.hidden_in}) * dtype_size(x_type), stream);
  fill_generated(b.x, x_type, k_activation_range, p.seed, tensor_id::x, stream);
  for (std::int64_t s = 0; s < p.num_slices(); ++s) {
    b.lora_a.emplace_back(elements({p.num_loras, p.rank, p.hidden_in}) * dtype_size(x_type), stream);
    fill_generated(b.lora_a.back(), x_type, k_weight_range, p.seed, tensor_id::lora_a(s), stream);
  }
}

void add_expand_tensors(CaseBuffers& b, const Problem& p, const Stream& stream) {
  const DType w = p.weight_dtype;
  for (std::int64_t s = 0; s < p.num_slices(); ++s) {
    const std::int64_t h = p.slice_hidden[static_cast<std::size_t>(s)];
    b.lora_b.emplace_back(elements({p.num_loras, h, p.rank}) * dtype_size(w), stream);
    fill_generated(b.lora_b.back(), w, k_weight_range, p.seed, tensor_id::lora_b(s), stream);
  }
  b.y = DeviceBuffer(elements({p.num_tokens, p.hidden_total()}) * dtype_size(w), stream);
  if (p.add_inputs) {
    b.y_in = DeviceBuffer(elements({p.num_tokens, p.hidden_total()}) * dtype_size(w), stream);
    fill_generated(b.y_in, w, k_activation_range, p.seed, tensor_id::y_in, stream);
  }
}

}  // namespace lp
