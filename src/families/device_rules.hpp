#pragma once
// Launch rules the expand and shrink kernels share (their device halves call these).

#include <cstdint>

#include <fmt/format.h>

#include "families/device.hpp"

namespace lp::family_rules {

inline std::int64_t constexpr_int(const kernels::Variant& v, const char* name, std::int64_t fallback) {
  return v.constexprs.integer(name).value_or(fallback);
}

/// SLICE_NUM equals the case's slices; EVEN_K holds for K = `k`.
inline void check_slices_and_even_k(const kernels::Variant& v, const Problem& p, std::int64_t k) {
  const std::int64_t slices = constexpr_int(v, "SLICE_NUM", 1);
  if (slices != p.num_slices()) {
    throw AbiViolation(fmt::format("variant {} is built for SLICE_NUM={} but the case has {} slices", v.id, slices,
                                   p.num_slices()));
  }
  const bool even_k = v.constexprs.boolean("EVEN_K").value_or(false);
  const std::int64_t block_k = constexpr_int(v, "BLOCK_K", 1);
  const std::int64_t split_k = constexpr_int(v, "SPLIT_K", 1);
  if (even_k && k % (block_k * split_k) != 0) {
    throw AbiViolation(fmt::format("variant {} assumes EVEN_K but K={} is not a multiple of BLOCK_K*SPLIT_K={}", v.id,
                                   k, block_k * split_k));
  }
}

/// Every slice's weight address, as an array.
inline launch_value::U64Array slice_addresses(const std::vector<DeviceBuffer>& slices) {
  launch_value::U64Array a;
  for (const DeviceBuffer& b : slices) {
    a.values.push_back(b.get());
  }
  return a;
}

/// The per-slice weight pointers: one pointer where the variant takes a scalar or
/// there is one slice, else an array of every slice's.
inline LaunchValue slice_pointers(const std::vector<DeviceBuffer>& slices, DType t, bool pointer_form) {
  if (!pointer_form || slices.size() == 1) {
    return launch_value::Pointer{slices.at(0).get(), t};
  }
  return slice_addresses(slices);
}

}  // namespace lp::family_rules
