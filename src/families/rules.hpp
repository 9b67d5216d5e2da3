#pragma once
// Rules and sizes several families share (their folders call these; nothing else does).

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "model/problem.hpp"
#include "util/checked.hpp"

namespace lp::family_rules {

using Fail = std::function<void(const std::string&)>;

/// x is read in the weight dtype, with a positive width, split at least once.
inline void check_reads_x(const Problem& p, const Fail& fail) {
  if (p.input_dtype != p.weight_dtype) {
    fail(fmt::format("x dtype {} differs from the weight dtype {}; docs/problem.md has X = W here",
                     dtype_name(p.input_dtype), dtype_name(p.weight_dtype)));
  }
  if (p.hidden_in <= 0) {
    fail(fmt::format("hidden_in {} is not positive", p.hidden_in));
  }
  if (p.split_k < 1) {
    fail(fmt::format("split_k {} is below 1", p.split_k));
  }
}

/// No experts unless the family routes to them.
inline void check_no_routing(const Problem& p, const Fail& fail) {
  if (p.moe != ExpertRouting{}) {
    fail("experts and top_k given, but only fused_moe routes tokens to experts");
  }
}

/// amplify: 0 or more pairs where an expand kernel is amplified, 0 elsewhere.
inline void check_amplify(const Problem& p, bool amplifiable, const Fail& fail) {
  if (p.amplify < 0 || (!amplifiable && p.amplify != 0)) {
    fail(fmt::format("amplify {} given, but only an expand kernel is amplified, by 0 or more pairs",
                     p.amplify));
  }
}

/// Saturating products and sums of sizes (a byte count never wraps).
inline std::uint64_t mul(std::initializer_list<std::uint64_t> factors) {
  std::uint64_t out = 1;
  for (const std::uint64_t f : factors) {
    out = saturating_mul(out, f);
  }
  return out;
}
inline std::uint64_t sum(std::initializer_list<std::uint64_t> terms) {
  std::uint64_t out = 0;
  for (const std::uint64_t t : terms) {
    out = saturating_add(out, t);
  }
  return out;
}
inline std::uint64_t u(std::int64_t v) { return v > 0 ? static_cast<std::uint64_t>(v) : std::uint64_t{0}; }

/// H_tot, saturating.
inline std::uint64_t hidden_total(const Problem& p) {
  std::uint64_t h_tot = 0;
  for (const std::int64_t h : p.slice_hidden) {
    h_tot = saturating_add(h_tot, u(h));
  }
  return h_tot;
}

/// The scratch the reference needs beside the case's tensors (about their size
/// again) and a fixed 64 MiB for cuBLAS and the runtime: the worker's estimate.
inline std::uint64_t with_reference_scratch(std::uint64_t tensors) {
  return sum({mul({2, tensors}), std::uint64_t{64} << 20});
}

}  // namespace lp::family_rules
