// The rules every family's problem shares (docs/problem.md), then the family's own.
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "families/family.hpp"
#include "util/error.hpp"

namespace lp {

std::string describe(const Problem& p) {
  return fmt::format("{} T={} R={} H=[{}]{} seed={}", op_name(p.op), p.num_tokens, p.rank,
                     fmt::join(p.slice_hidden, ","), family_of(p.op).describe_rest(p), p.seed);
}

void validate(const Problem& p) {
  const auto fail = [&](const std::string& why) { throw Error(fmt::format("invalid problem ({}): {}", op_name(p.op), why)); };
  if (p.num_tokens <= 0 || p.num_tokens > std::numeric_limits<std::int32_t>::max()) {
    fail(fmt::format("num_tokens {} is outside 1..{} (the index tensors are int32)", p.num_tokens,
                     std::numeric_limits<std::int32_t>::max()));
  }
  if (p.rank <= 0) {
    fail(fmt::format("rank {} is not positive", p.rank));
  }
  if (p.num_slices() < 1 || p.num_slices() > k_max_slices) {
    fail(fmt::format("{} slices; docs/problem.md allows 1 to {}", p.num_slices(), k_max_slices));
  }
  for (std::size_t s = 0; s < p.slice_hidden.size(); ++s) {
    if (p.slice_hidden[s] <= 0) {
      fail(fmt::format("slice_hidden[{}] = {} is not positive", s, p.slice_hidden[s]));
    }
  }
  if (p.num_loras < 1) {
    fail(fmt::format("num_loras {} is below 1", p.num_loras));
  }
  if (const std::optional<DType> fixed = family_of(p.op).traits().fixed_weight_dtype) {
    if (p.weight_dtype != *fixed) {
      fail(fmt::format("weight dtype {} is not {}", dtype_name(p.weight_dtype), dtype_name(*fixed)));
    }
  } else if (p.weight_dtype != DType::bf16 && p.weight_dtype != DType::f16) {
    fail(fmt::format("weight dtype {} is not bf16 or fp16", dtype_name(p.weight_dtype)));
  }
  if (p.scale_group != 0 && !family_of(p.op).traits().scale_group_axis) {
    fail(fmt::format("scale_group {} given, but only the FP8 families take scales", p.scale_group));
  }
  family_of(p.op).check(p, fail);
  if (static_cast<std::int64_t>(p.lora_of.size()) != p.num_tokens) {
    fail(fmt::format("lora_of has {} entries for {} tokens", p.lora_of.size(), p.num_tokens));
  }
  for (std::size_t t = 0; t < p.lora_of.size(); ++t) {
    if (p.lora_of[t] < -1 || p.lora_of[t] >= p.num_loras) {
      fail(fmt::format("lora_of[{}] = {} is outside -1..{}", t, p.lora_of[t], p.num_loras - 1));
    }
  }
}

OutputInit output_init(const Problem& problem) noexcept {
  if (family_of(problem.op).writes_buf()) {
    return problem.split_k > 1 ? OutputInit::zero : OutputInit::poison;
  }
  return problem.add_inputs ? OutputInit::y_in : OutputInit::poison;
}

std::string reference_key(const Problem& p) {
  return fmt::format("{} seed={} init={}", inputs_key(p), p.seed, static_cast<int>(output_init(p)));
}

Tolerance tolerance_for(const Problem& problem) {
  validate(problem);
  return family_of(problem.op).tolerance(problem);
}

std::vector<ToleranceRow> tolerance_table() {
  std::vector<ToleranceRow> rows;
  for (const KernelFamily* f : families()) {
    for (ToleranceRow& row : f->tolerance_rows()) {
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

}  // namespace lp
