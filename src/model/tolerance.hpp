#pragma once
// Tolerances: an element passes when |actual - expected| <= atol + rtol * |expected|.
// Derived per case from the output dtype, the op, K and the magnitudes the input
// generator guarantees (inputs.hpp: activations |v| <= 2, weights |v| <= 0.1), and
// written into the report by the caller (Tolerance::describe and atol_terms).
//
// Reasoning. Kernel and cuBLAS see the same rounded operands, so they differ only by
//  1. fp32 accumulation order (tensor-core blocking, split-K, cuBLAS's algorithm):
//     per side ~ sqrt(K) * 2^-24 * sum|terms|, sum|terms| <= K * a_max * b_max;
//     two sides, so 2x that ("accumulation");
//  2. the output rounding to W: accumulators that differ by less than an ulp round
//     to the same value or to neighbours, one ulp = at most 2u|y| apart, u = 2^-8 for
//     bf16, 2^-11 for fp16 (2^-24 for shrink's fp32 output) -> rtol = 2 * 2u;
//  3. ADD_INPUTS: round_W(round_W(acc) + y_in) rounds acc first, so a flip there is an
//     ulp of acc, which exceeds an ulp of y when y_in cancels acc: 2u * 4 sigma_acc,
//     sigma_acc = sqrt(R) * rms(buf) * rms(B) ("add_inputs_rounding");
//  4. lora_linear: the two shrinks differ (1.), so cast_W(buf) may round an element
//     differently: one ulp of a 4-sigma buf times the largest weight ("buf_cast_flip");
//     fused_moe rounds its rank tile to W the same way and gets the same terms (its
//     routing weights are at most 1);
//  5. shrink SPLIT_K > 1: atomics add the partial sums in any order:
//     (SPLIT_K - 1) * 2^-24 * sum|terms| ("split_k").
//  6. an amplified expand (problem.amplify = D > 0, src/ptx/amplify.hpp): D pairs
//     acc = (acc - p) + p before each of the K/16 k16 wgmmas, two fp32 additions per
//     pair, each off by at most one ulp (2^-23, so truncating tensor-core adds are
//     covered) of |acc| + |p| <= K a_max b_max + 16 b_max^2, random in sign:
//     sqrt(2 D K/16) * 2^-23 * (K a_max b_max + 16 b_max^2) ("amplify_pairs"). The
//     table below has D = 0; tests/verify/tolerance_test.cpp shows an amplified clean
//     result inside the unamplified tolerance with its margin, at D up to 64.
//  7. the FP8 families (shrink_fp8, expand_fp8): their fp8 wgmma keeps about 14 bits of
//     each k32 instruction's sum (DeepSeek-V3 technical report, 3.3.2): each of the K/32
//     instructions truncates to 2^-13 of the largest magnitude it adds, the running
//     accumulator (4 sigma_acc, sigma_acc = sqrt(K) rms(a) rms(b)) plus its 32 products
//     (32 a_max b_max); truncation is one-sided, so the errors add linearly:
//     ceil(K/32) 2^-13 (4 sigma_acc + 32 a_max b_max) scale ("fp8_accumulation";
//     with_fp8_accumulation), added to their shrink's or expand's own terms. They have
//     no rows in the table: as fused_moe's, their tolerance is in each case's
//     tolerance_why.
// atol = 2 x (sum of the terms that apply) and rtol = 2 x 2u: the factor 2 is the
// margin, so a clean case is expected at max dev/tol <= 0.5 and the 4-sigma terms
// would need an 8-sigma element (p ~ 1e-15) to fail a clean case. NaN, Inf and
// poison never pass, whatever the tolerance.
//
// The table (tolerance_table(); scale 1, SPLIT_K 1, expand input fp32, H_in 4096 for
// lora_linear). The numbers are pinned by tests/verify/tolerance_test.cpp.
//
//   op           out   K      add_inputs  atol       rtol
//   expand       bf16  16     no          3.052e-06  1.562e-02
//   expand       bf16  16     yes         1.982e-02  1.562e-02
//   expand       bf16  64     no          2.441e-05  1.562e-02
//   expand       bf16  64     yes         3.967e-02  1.562e-02
//   expand       bf16  256    no          1.953e-04  1.562e-02
//   expand       bf16  256    yes         7.948e-02  1.562e-02
//   expand       bf16  1024   no          1.563e-03  1.562e-02
//   expand       bf16  1024   yes         1.601e-01  1.562e-02
//   expand       fp16  16     no          3.052e-06  1.953e-03
//   expand       fp16  16     yes         2.481e-03  1.953e-03
//   expand       fp16  64     no          2.441e-05  1.953e-03
//   expand       fp16  64     yes         4.980e-03  1.953e-03
//   expand       fp16  256    no          1.953e-04  1.953e-03
//   expand       fp16  256    yes         1.011e-02  1.953e-03
//   expand       fp16  1024   no          1.563e-03  1.953e-03
//   expand       fp16  1024   yes         2.138e-02  1.953e-03
//   shrink       fp32  1024   no          1.563e-03  2.384e-07
//   shrink       fp32  4096   no          1.250e-02  2.384e-07
//   shrink       fp32  16384  no          1.000e-01  2.384e-07
//   lora_linear  bf16  16     no          3.174e-02  1.562e-02
//   lora_linear  bf16  64     no          3.196e-02  1.562e-02
//   lora_linear  bf16  256    no          3.370e-02  1.562e-02
//   lora_linear  fp16  16     no          3.995e-03  1.953e-03
//   lora_linear  fp16  64     no          4.212e-03  1.953e-03
//   lora_linear  fp16  256    no          5.946e-03  1.953e-03

#include <cstdint>
#include <string>
#include <vector>

#include "model/problem.hpp"

namespace lp {

/// One named contribution to atol (before the margin factor).
struct ToleranceTerm {
  std::string name;   ///< "accumulation", "add_inputs_rounding", "buf_cast_flip", "split_k"
  double value;       ///< in units of the output
  std::string why;    ///< the formula and the reason, for the report
};

/// The pass criterion |a - e| <= atol + rtol * |e| of one case.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
  double margin = 1.0;                  ///< atol = margin * sum(atol_terms)
  std::vector<ToleranceTerm> atol_terms;
  std::string rtol_reason;
  /// atol / rtol: the magnitude below which atol dominates (max_rel_dev's floor).
  [[nodiscard]] double rel_floor() const noexcept;
  /// One line for logs and the report: "atol 1.2e-05 = 2 x (accumulation 6.1e-06); rtol ...".
  [[nodiscard]] std::string describe() const;
};

/// The tolerance of a shrink-shaped product (fp32 output): K = `k` terms of
/// activations times weights, times `scale`, its partial sums split `split_k` ways.
[[nodiscard]] Tolerance fp32_output_tolerance(double k, double scale, int split_k);

/// Hopper's fp8 wgmma accumulates each k32 instruction's products with about 14 bits
/// (DeepSeek-V3 technical report, section 3.3.2): 2^-13 of the largest term.
inline constexpr double k_fp8_accumulation_u = 1.220703125e-04;
/// `t` with item 7's term added and atol recomputed: the FP8 families' tensor cores
/// sum fp8 products over `k` terms (times `scale`) less exactly than fp32. The raw fp8
/// operands are the generator's magnitudes and the power-of-two scales are at most 1,
/// so the generator's a_max, b_max and rms bound both the raw and the scaled sums.
[[nodiscard]] Tolerance with_fp8_accumulation(Tolerance t, double k, double scale);

/// What the tolerance of an expand-shaped product (output in W, K = R) depends on.
struct WOutputShape {
  DType output = DType::bf16;
  std::int64_t rank = 0;
  int amplify = 0;
  bool add_inputs = false;
  /// A is a shrink's result over this many terms, cast to W (0: A is an activation).
  std::int64_t a_shrunk_over = 0;
  double shrink_scale = 1.0;  ///< that shrink's scale
};
[[nodiscard]] Tolerance w_output_tolerance(const WOutputShape& shape);

/// One row of the documented table.
struct ToleranceRow {
  Op op;
  DType output;
  std::int64_t k;          ///< R for expand and lora_linear, hidden_in for shrink
  bool add_inputs;
  std::int64_t hidden_in;  ///< lora_linear's shrink K (0 for expand)
  Tolerance tolerance;
};

}  // namespace lp
