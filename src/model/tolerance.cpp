#include "model/tolerance.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "util/error.hpp"
#include "model/value_range.hpp"

namespace lp {
namespace {

constexpr double k_u32 = 5.9604644775390625e-08;  // 2^-24, fp32 unit roundoff
constexpr double k_margin = 2.0;                   // clean cases land at dev/tol <= 1/k_margin
constexpr double k_sigmas = 4.0;                   // "a large element" of a random-sign sum

// Root mean square of a magnitude uniform in [lo, hi].
double rms(ValueRange r) {
  const double lo = r.lo;
  const double hi = r.hi;
  return std::sqrt((hi * hi * hi - lo * lo * lo) / (3.0 * (hi - lo)));
}

// One side's fp32 accumulation error over k terms bounded by a_max * b_max:
// sqrt(k) * 2^-24 * sum|terms| (the typical growth of rounding errors of random
// sign, with sum|terms| at its worst case k * a_max * b_max).
double accumulation_error(double k, double a_max, double b_max) { return std::sqrt(k) * k_u32 * k * a_max * b_max; }

// What the amplifier (src/ptx/amplify.hpp) adds: `amplify` pairs (acc - p) + p before
// each of the K/16 k16 wgmmas that sum an element, each pair two fp32 additions on
// the tensor cores. Each addition is off by at most one ulp, 2^-23 (truncation, not
// only round-to-nearest) of |acc| + |p|, with |acc| <= K a_max b_max and |p| <= 16
// b_max^2 (the pairs' A is B's own values). The roundings have random signs, so they
// grow as the square root of their number, as in accumulation_error.
double amplify_error(int amplify, double k, double a_max, double b_max) {
  const double roundings = 2.0 * amplify * std::ceil(k / 16.0);
  return std::sqrt(roundings) * 2.0 * k_u32 * (k * a_max * b_max + 16.0 * b_max * b_max);
}

void add_term(Tolerance& t, std::string name, double value, std::string why) {
  t.atol_terms.push_back(ToleranceTerm{std::move(name), value, std::move(why)});
}

void finish(Tolerance& t) {
  double sum = 0.0;
  for (const ToleranceTerm& term : t.atol_terms) {
    sum += term.value;
  }
  t.atol = k_margin * sum;
  t.margin = k_margin;
}

// Rounding the output to W: two results whose fp32 accumulators differ by less
// than an ulp round to the same W value or to neighbours, one ulp = at most 2u|y|
// apart. rtol = margin * 2u, so a flip costs at most 1/margin of the tolerance.
void set_output_rtol(Tolerance& t, DType out) {
  const double u = unit_roundoff(out);
  t.rtol = k_margin * 2.0 * u;
  t.rtol_reason = fmt::format("one {} rounding flip of the output is at most one ulp = 2u|y| (u = {:.3g}); "
                              "rtol = {} x 2u",
                              dtype_name(out), u, k_margin);
}

}  // namespace

double Tolerance::rel_floor() const noexcept { return rtol > 0.0 ? atol / rtol : 0.0; }

std::string Tolerance::describe() const {
  std::string text = fmt::format("atol {:.4g} = {} x (", atol, margin);
  for (std::size_t i = 0; i < atol_terms.size(); ++i) {
    text += fmt::format("{}{} {:.4g}", i == 0 ? "" : " + ", atol_terms[i].name, atol_terms[i].value);
  }
  text += fmt::format("); rtol {:.4g}: {}", rtol, rtol_reason);
  return text;
}

Tolerance fp32_output_tolerance(double k, double scale, int split_k) {
  Tolerance t;
  const double act_max = k_activation_range.hi;
  const double w_max = k_weight_range.hi;
  add_term(t, "accumulation", 2.0 * accumulation_error(k, act_max, w_max) * scale,
           "fp32 accumulation order of the kernel and of cuBLAS over K = hidden_in, sqrt(K) 2^-24 sum|terms| each");
  if (split_k > 1) {
    add_term(t, "split_k", (split_k - 1) * k_u32 * k * act_max * w_max * scale,
             "SPLIT_K partial sums added by atomics in any order: (SPLIT_K - 1) 2^-24 sum|terms|");
  }
  t.rtol = k_margin * 2.0 * k_u32;
  t.rtol_reason = fmt::format("fp32 output: one rounding of the final product; rtol = {} x 2^-23", k_margin);
  finish(t);
  return t;
}

Tolerance w_output_tolerance(const WOutputShape& s) {
  Tolerance t;
  const double w_max = k_weight_range.hi;
  const double w_rms = rms(k_weight_range);
  const double u_out = unit_roundoff(s.output);
  double a_max = k_activation_range.hi;  // bound on the expand's A operand
  double a_rms = rms(k_activation_range);
  if (s.a_shrunk_over > 0) {
    // A comes out of a shrink: a random-sign sum of a_shrunk_over terms, cast to W.
    const double buf_sigma = std::sqrt(static_cast<double>(s.a_shrunk_over)) * a_rms * w_rms * s.shrink_scale;
    a_max = k_sigmas * buf_sigma;
    a_rms = buf_sigma;
    add_term(t, "buf_cast_flip", 2.0 * u_out * a_max * w_max,
             fmt::format("the two shrinks differ by their fp32 accumulation error, so cast_{}(buf) may round one "
                         "element to a neighbouring value: one ulp (2u) of a {}-sigma buf times the largest weight",
                         dtype_name(s.output), k_sigmas));
  }
  const auto rank = static_cast<double>(s.rank);
  add_term(t, "accumulation", 2.0 * accumulation_error(rank, a_max, w_max),
           "fp32 accumulation order of the kernel and of cuBLAS over K = R, sqrt(K) 2^-24 sum|terms| each");
  if (s.amplify > 0) {
    add_term(t, "amplify_pairs", amplify_error(s.amplify, rank, a_max, w_max),
             fmt::format("the amplifier's {} pair(s) (acc - p) + p before each of the K/16 wgmmas: two fp32 "
                         "additions per pair, each at most one ulp (2^-23) of |acc| + |p| (|acc| <= K a_max b_max, "
                         "|p| <= 16 b_max^2), grown as the square root of their number",
                         s.amplify));
  }
  if (s.add_inputs) {
    const double acc_sigma = std::sqrt(rank) * a_rms * w_rms;
    add_term(t, "add_inputs_rounding", 2.0 * u_out * k_sigmas * acc_sigma,
             fmt::format("ADD_INPUTS rounds acc to {} before adding y_in, so a flip there is one ulp of acc, not of "
                         "y (they differ when y_in cancels acc): 2u of a {}-sigma acc",
                         dtype_name(s.output), k_sigmas));
  }
  set_output_rtol(t, s.output);
  finish(t);
  return t;
}

Tolerance with_fp8_accumulation(Tolerance t, double k, double scale) {
  const double a_max = k_activation_range.hi;
  const double b_max = k_weight_range.hi;
  const double acc_sigma = std::sqrt(k) * rms(k_activation_range) * rms(k_weight_range);
  const double per_instruction = k_sigmas * acc_sigma + 32.0 * a_max * b_max;
  add_term(t, "fp8_accumulation", std::ceil(k / 32.0) * k_fp8_accumulation_u * per_instruction * scale,
           fmt::format("Hopper's fp8 wgmma keeps about 14 bits of each k32 instruction's sum (DeepSeek-V3 technical "
                       "report, section 3.3.2): each of the K/32 instructions truncates to 2^-13 of the largest "
                       "magnitude it adds, the running accumulator ({}-sigma) plus its 32 products (32 a_max b_max), "
                       "and truncation is one-sided, so the K/32 errors add up",
                       k_sigmas));
  finish(t);
  return t;
}

}  // namespace lp
