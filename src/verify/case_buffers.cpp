#include "verify/case_buffers.hpp"

#include <span>

#include "verify/inputs.hpp"
#include "verify/poison.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

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

// lora_linear's intermediate buf starts like a shrink output: poisoned so that a
// shrink kernel that skips elements feeds NaN into the expand (and is caught in y),
// or zero when SPLIT_K > 1 needs it.
void reset_intermediate(const Problem& problem, CaseBuffers& buffers, const Stream& stream) {
  if (problem.split_k > 1) {
    buffers.buf.fill_u32(0, stream);
  } else {
    fill_poison(buffers.buf, DType::f32, stream);
  }
}

}  // namespace

OutputInit output_init(const Problem& problem) noexcept {
  if (problem.op == Op::shrink) {
    return problem.split_k > 1 ? OutputInit::zero : OutputInit::poison;
  }
  return problem.add_inputs ? OutputInit::y_in : OutputInit::poison;
}

bool unwritten_measurable(const Problem& problem) noexcept { return output_init(problem) == OutputInit::poison; }

const DeviceBuffer& CaseBuffers::output(const Problem& problem) const noexcept {
  return problem.op == Op::shrink ? buf : y;
}

DeviceBuffer& CaseBuffers::output(const Problem& problem) noexcept { return problem.op == Op::shrink ? buf : y; }

const DeviceBuffer& CaseBuffers::row_lora(const Problem& problem) const noexcept {
  return problem.op == Op::fused_moe ? pair_lora : lora_of;
}

CaseBuffers make_case_buffers(const Problem& problem, const LoraMetadata& metadata, const Stream& stream) {
  validate(problem);
  const LoraMetadata expected = build_lora_metadata(problem.lora_of, problem.num_loras);
  if (metadata.lora_ids != expected.lora_ids || metadata.num_tokens_per_lora != expected.num_tokens_per_lora ||
      metadata.lora_token_start_loc != expected.lora_token_start_loc ||
      metadata.token_indices_sorted_by_lora_ids != expected.token_indices_sorted_by_lora_ids) {
    throw Error("make_case_buffers: the metadata was not built from this problem's lora_of");
  }
  const std::int64_t t = problem.num_tokens;
  const std::int64_t r = problem.rank;
  const std::int64_t s_count = problem.num_slices();
  const std::int64_t l = problem.num_loras;
  const DType w = problem.weight_dtype;
  const std::uint64_t seed = problem.seed;
  CaseBuffers b;

  if (problem.op == Op::fused_moe) {
    // docs/problem.md "Fused-MoE LoRA": the same generated ranges as lora_linear.
    const std::int64_t e = problem.moe.num_experts;
    const std::int64_t k = problem.hidden_in;
    const std::int64_t n = problem.slice_hidden.at(0);
    const std::int64_t rows = problem.output_rows();
    b.x = DeviceBuffer(elements({problem.x_rows(), k}) * dtype_size(w), stream);
    fill_generated(b.x, w, k_activation_range, seed, tensor_id::x, stream);
    for (std::int64_t s = 0; s < s_count; ++s) {
      b.lora_a.emplace_back(elements({l, e, r, k}) * dtype_size(w), stream);
      fill_generated(b.lora_a.back(), w, k_weight_range, seed, tensor_id::lora_a(s), stream);
      b.lora_b.emplace_back(elements({l, e, n, r}) * dtype_size(w), stream);
      fill_generated(b.lora_b.back(), w, k_weight_range, seed, tensor_id::lora_b(s), stream);
    }
    b.y = DeviceBuffer(elements({rows, s_count * n}) * dtype_size(w), stream);
    if (problem.add_inputs) {
      b.y_in = DeviceBuffer(b.y.bytes(), stream);
      fill_generated(b.y_in, w, k_activation_range, seed, tensor_id::y_in, stream);
    }
    b.reference = DeviceBuffer(b.y.bytes(), stream);
    b.routing = make_moe_routing(problem);
    b.topk_weights = upload(std::span<const float>(b.routing.topk_weights), stream);
    b.sorted_token_ids = upload_ints(b.routing.sorted_token_ids, stream);
    b.expert_ids = upload_ints(b.routing.expert_ids, stream);
    b.num_tokens_post_padded = upload_ints(b.routing.num_tokens_post_padded, stream);
    b.adapter_enabled = upload_ints(std::vector<std::int32_t>(static_cast<std::size_t>(l) + 1, 1), stream);
    b.pair_lora = upload_ints(b.routing.pair_lora, stream);
    if (!b.routing.group_pairs.empty()) {
      b.group_pairs = upload_ints(b.routing.group_pairs, stream);
    }
    b.lora_of = upload_ints(problem.lora_of, stream);
    b.lora_ids = upload_ints(metadata.lora_ids, stream);
    return b;
  }
  if (problem.op != Op::expand) {
    const DType x_type = problem.input_dtype;
    b.x = DeviceBuffer(elements({t, problem.hidden_in}) * dtype_size(x_type), stream);
    fill_generated(b.x, x_type, k_activation_range, seed, tensor_id::x, stream);
    for (std::int64_t s = 0; s < s_count; ++s) {
      b.lora_a.emplace_back(elements({l, r, problem.hidden_in}) * dtype_size(x_type), stream);
      fill_generated(b.lora_a.back(), x_type, k_weight_range, seed, tensor_id::lora_a(s), stream);
    }
  }
  if (problem.op != Op::shrink) {
    for (std::int64_t s = 0; s < s_count; ++s) {
      const std::int64_t h = problem.slice_hidden[static_cast<std::size_t>(s)];
      b.lora_b.emplace_back(elements({l, h, r}) * dtype_size(w), stream);
      fill_generated(b.lora_b.back(), w, k_weight_range, seed, tensor_id::lora_b(s), stream);
    }
    b.y = DeviceBuffer(elements({t, problem.hidden_total()}) * dtype_size(w), stream);
    if (problem.add_inputs) {
      b.y_in = DeviceBuffer(elements({t, problem.hidden_total()}) * dtype_size(w), stream);
      fill_generated(b.y_in, w, k_activation_range, seed, tensor_id::y_in, stream);
    }
  }
  const DType buf_type = problem.op == Op::expand ? problem.input_dtype : DType::f32;
  b.buf = DeviceBuffer(elements({s_count, t, r}) * dtype_size(buf_type), stream);
  if (problem.op == Op::expand) {
    fill_generated(b.buf, buf_type, k_activation_range, seed, tensor_id::buf, stream);
  }
  b.reference = DeviceBuffer(b.output(problem).bytes(), stream);

  b.lora_of = upload_ints(problem.lora_of, stream);
  b.lora_ids = upload_ints(metadata.lora_ids, stream);
  b.num_tokens_per_lora = upload_ints(metadata.num_tokens_per_lora, stream);
  b.lora_token_start_loc = upload_ints(metadata.lora_token_start_loc, stream);
  b.token_indices_sorted_by_lora_ids = upload_ints(metadata.token_indices_sorted_by_lora_ids, stream);
  return b;  // all queued on `stream`: the buffers are stream-ordered

}

void reset_output(const Problem& problem, CaseBuffers& buffers, const Stream& stream) {
  if (problem.op == Op::lora_linear) {
    reset_intermediate(problem, buffers, stream);
  }
  DeviceBuffer& out = buffers.output(problem);
  switch (output_init(problem)) {
    case OutputInit::poison:
      fill_poison(out, problem.output_dtype(), stream);
      break;
    case OutputInit::y_in:
      out.copy_from(buffers.y_in, stream);
      break;
    case OutputInit::zero:
      out.fill_u32(0, stream);
      break;
  }
}

}  // namespace lp
