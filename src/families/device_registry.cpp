// The one place a family's device half is registered (registry.cpp has its host
// half, in the same order), and what every family's device half shares.
#include <array>

#include <fmt/format.h>

#include "families/device.hpp"
#include "families/expand/expand_device.hpp"
#include "families/fp8/fp8_device.hpp"
#include "families/fused_moe/fused_moe_device.hpp"
#include "families/lora_linear/lora_linear_device.hpp"
#include "families/shrink/shrink_device.hpp"

namespace lp {
namespace {

const std::array<const DeviceFamily*, 6> k_device_families = {&expand_device(),      &shrink_device(),
                                                              &lora_linear_device(), &fused_moe_device(),
                                                              &shrink_fp8_device(),  &expand_fp8_device()};

}  // namespace

const DeviceFamily& device_family_of(Op op) noexcept { return *k_device_families[static_cast<std::size_t>(op)]; }

std::optional<LaunchValue> DeviceFamily::argument(const LaunchInputs&, const std::string&, bool) const {
  return std::nullopt;
}

std::optional<std::int64_t> DeviceFamily::grid_quantity(const LaunchInputs&, const std::string&) const {
  return std::nullopt;
}

void DeviceFamily::check_variant(const kernels::Variant& v, const Problem& p) const {
  throw AbiViolation(fmt::format("variant {} ({}) is not a kernel of its own: {} has no launch of it", v.id, v.op,
                                 op_name(p.op)));
}

void DeviceFamily::reset_output(const Problem& p, CaseBuffers& b, const Stream& stream) const {
  reset_output_tensor(p, b, stream);
}

DeviceBuffer& output_of(const Problem& problem, CaseBuffers& buffers) noexcept {
  return family_of(problem.op).writes_buf() ? buffers.buf : buffers.y;
}

const DeviceBuffer& row_lora_of(const Problem&, const CaseBuffers& buffers) noexcept {
  return buffers.pair_lora.bytes() > 0 ? buffers.pair_lora : buffers.lora_of;
}

CompareLayout compare_layout(const Problem& problem) {
  if (family_of(problem.op).writes_buf()) {
    return CompareLayout::shrink_output(problem.num_slices(), problem.num_tokens, problem.rank);
  }
  // y, or fused_moe's out [T * top_k, S * N], laid out like y with one row per routed pair.
  return CompareLayout::expand_output(output_rows(problem), problem.slice_hidden);
}

void reset_output_tensor(const Problem& problem, CaseBuffers& buffers, const Stream& stream) {
  DeviceBuffer& out = output_of(problem, buffers);
  switch (output_init(problem)) {
    case OutputInit::poison:
      fill_poison(out, output_dtype(problem), stream);
      break;
    case OutputInit::y_in:
      out.copy_from(buffers.y_in, stream);
      break;
    case OutputInit::zero:
      out.fill_u32(0, stream);
      break;
  }
}

namespace {

// The reference starts as the output does before a launch, so rows of tokens
// without a LoRA compare against exactly that.
void init_reference(const Problem& p, CaseBuffers& b, const Stream& stream) {
  switch (output_init(p)) {
    case OutputInit::poison:
      fill_poison(b.reference, output_dtype(p), stream);
      break;
    case OutputInit::y_in:
      b.reference.copy_from(b.y_in, stream);
      break;
    case OutputInit::zero:
      b.reference.fill_u32(0, stream);
      break;
  }
}

}  // namespace

CaseBuffers make_case_buffers(const Problem& problem, const LoraMetadata& metadata, const Stream& stream) {
  validate(problem);
  const LoraMetadata expected = build_lora_metadata(problem.lora_of, problem.num_loras);
  if (metadata.lora_ids != expected.lora_ids || metadata.num_tokens_per_lora != expected.num_tokens_per_lora ||
      metadata.lora_token_start_loc != expected.lora_token_start_loc ||
      metadata.token_indices_sorted_by_lora_ids != expected.token_indices_sorted_by_lora_ids) {
    throw Error("make_case_buffers: the metadata was not built from this problem's lora_of");
  }
  return device_family_of(problem.op).make_buffers(problem, metadata, stream);
}

void reset_output(const Problem& problem, CaseBuffers& buffers, const Stream& stream) {
  device_family_of(problem.op).reset_output(problem, buffers, stream);
}

void enqueue_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                       const CublasHandle& cublas, const Stream& stream, GpuSpan& span) {
  validate(problem);
  if (cublas.stream() != stream.get()) {
    throw Error("compute_reference: the cuBLAS handle is bound to another stream");
  }
  const DeviceFamily& family = device_family_of(problem.op);
  // Stream-ordered: freed after the work queued here, however this returns.
  Workspace workspace = family.workspace(problem, metadata, buffers, stream);
  span.time(stream, [&] {
    init_reference(problem, buffers, stream);
    family.reference(problem, metadata, buffers, workspace, cublas, stream);
  });
}

double compute_reference(const Problem& problem, const LoraMetadata& metadata, CaseBuffers& buffers,
                         const CublasHandle& cublas, const Stream& stream) {
  GpuSpan span;
  enqueue_reference(problem, metadata, buffers, cublas, stream, span);
  return span.ms();
}

}  // namespace lp
