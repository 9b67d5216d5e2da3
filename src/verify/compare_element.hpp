#pragma once
// The per-element arithmetic of the comparison, compiled twice: by nvcc into the
// device kernel (compare_device.cu) and by g++ into the host twin (compare.cpp).
// Every floating-point step is spelled out (explicit fma, no expression nvcc could
// contract differently from g++), so the twin reproduces the device's metrics bit
// for bit and CPU tests on host-built buffers test what the GPU runs.

#include <cmath>
#include <cstdint>

#include "model/dtype.hpp"

namespace lp::compare_detail {

inline constexpr int k_max_slices = 3;

/// The output's layout as the kernel sees it (a POD copy of CompareLayout + tiles).
struct KernelLayout {
  int kind = 0;  ///< 0: token-major y [T, H_tot]; 1: slice-major buf [S, T, R]
  int num_slices = 0;
  std::int64_t num_tokens = 0;
  std::int64_t row_stride = 0;    ///< elements between consecutive tokens
  std::int64_t slice_stride = 0;  ///< elements between slices (slice-major only)
  std::int64_t offset[k_max_slices] = {};     ///< first column of each slice (token-major)
  std::int64_t width[k_max_slices] = {};      ///< columns of each slice
  std::int64_t tiles_n[k_max_slices] = {};    ///< ceil(width / block_n)
  std::int64_t tile_base[k_max_slices] = {};  ///< index of the slice's first tile
  std::int64_t block_m = 1;
  std::int64_t block_n = 1;
};

/// What the comparison needs to judge one element.
struct ElementRule {
  DType dtype = DType::f32;
  double atol = 0.0;
  double rtol = 0.0;
  double rel_floor = 0.0;        ///< max_rel_dev divides by max(|expected|, rel_floor)
  bool poison_measurable = false;
  std::uint32_t poison = 0;
};

/// Position of one element: slice, token, column (y: the column of y, off_s + n;
/// buf: r).
struct Coord {
  std::int64_t slice;
  std::int64_t token;
  std::int64_t column;
};

LP_HD inline Coord decode(const KernelLayout& l, std::uint64_t index) {
  const auto i = static_cast<std::int64_t>(index);
  if (l.kind == 1) {
    const std::int64_t slice = i / l.slice_stride;
    const std::int64_t rest = i - slice * l.slice_stride;
    return Coord{slice, rest / l.row_stride, rest % l.row_stride};
  }
  const std::int64_t token = i / l.row_stride;
  const std::int64_t column = i - token * l.row_stride;
  int slice = 0;
  while (slice + 1 < l.num_slices && column >= l.offset[slice + 1]) {
    ++slice;
  }
  return Coord{slice, token, column};
}

/// The output tile (block_m tokens x block_n columns of one slice) holding `c`.
LP_HD inline std::int64_t tile_index(const KernelLayout& l, const Coord& c) {
  const auto s = static_cast<int>(c.slice);
  const std::int64_t n = l.kind == 1 ? c.column : c.column - l.offset[s];
  return l.tile_base[s] + (c.token / l.block_m) * l.tiles_n[s] + n / l.block_n;
}

LP_HD inline bool f32_bits_nan(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) > 0x7F800000u; }
LP_HD inline bool f32_bits_inf(std::uint32_t bits) { return (bits & 0x7FFFFFFFu) == 0x7F800000u; }

/// The verdict on one element.
struct ElementOutcome {
  bool bad = false;              ///< counts toward first_bad and failing tiles
  bool mismatch = false;         ///< live element outside tolerance (NaN, Inf, poison included)
  bool nan = false;              ///< live element is a NaN other than the poison
  bool inf = false;              ///< live element is +-Inf
  bool huge = false;             ///< live element is finite with |value| > k_huge (docs/amplify.md)
  bool unwritten = false;        ///< live element still holds the poison
  bool untouched_write = false;  ///< element of a -1 row whose bits changed
  bool reference_nonfinite = false;    ///< the reference itself is not finite (an invalid case)
  bool has_dev = false;          ///< both finite: the deviations below are defined
  double abs_dev = 0.0;
  double tolerance = 0.0;        ///< atol + rtol * |expected|: the deviation over tolerance divides by it
  double rel_den = 0.0;          ///< max(|expected|, rel_floor): the relative deviation divides by it
};

LP_HD inline double abs_d(double x) { return x < 0.0 ? -x : x; }

/// The magnitude above which a finite output is "huge": no LoRA output comes near it,
/// while the halves of an fp32 word read as bf16 (the register-A hazard's raw-bits
/// symptom) land there or at NaN for most random exponents.
inline constexpr double k_huge = 1e30;

LP_HD inline double safe_div(double num, double den) {
  if (den > 0.0) {
    return num / den;
  }
  return num > 0.0 ? static_cast<double>(INFINITY) : 0.0;  // x/0: +inf when something deviates, else 0
}

/// max(cur, safe_div(num, den)) for num >= 0 and cur >= 0, dividing only when the
/// quotient could exceed cur: a double division costs the device kernel more than
/// the rest of an element. num == 0 (an element equal to its reference, the common
/// one) gives a quotient of 0 whatever den is. When den > 0 and num < fl(cur den),
/// num <= cur den exactly (a representable num above the exact product would be
/// nearer to it than its rounding, also for subnormal and overflowing products), so
/// num / den <= cur and the rounded quotient is at most cur: the result is that of
/// dividing every time.
LP_HD inline double raise_ratio(double cur, double num, double den) {
  if (num == 0.0 || (den > 0.0 && num < cur * den)) {
    return cur;
  }
  const double q = safe_div(num, den);
  return q > cur ? q : cur;
}

/// Judges `actual` against `expected` (raw bits of rule.dtype). `live`: the
/// element's token has a LoRA (lora_of >= 0); otherwise it must keep its bits.
LP_HD inline ElementOutcome compare_element(const ElementRule& rule, std::uint32_t actual, std::uint32_t expected,
                                            bool live) {
  ElementOutcome o;
  if (!live) {
    o.untouched_write = actual != expected;
    o.bad = o.untouched_write;
    return o;
  }
  const float e = bits_to_float(rule.dtype, expected);
  const std::uint32_t e32 = u32_from_float(e);
  o.reference_nonfinite = f32_bits_nan(e32) || f32_bits_inf(e32);
  if (rule.poison_measurable && actual == rule.poison) {
    o.unwritten = true;
    o.mismatch = true;
    o.bad = true;
    return o;
  }
  const float a = bits_to_float(rule.dtype, actual);
  const std::uint32_t a32 = u32_from_float(a);
  o.nan = f32_bits_nan(a32);
  o.inf = f32_bits_inf(a32);
  if (o.nan || o.inf || o.reference_nonfinite) {
    o.mismatch = true;  // NaN never passes; neither does Inf, nor anything against a non-finite reference
    o.bad = true;
    return o;
  }
  const double ad = static_cast<double>(a);
  const double ed = static_cast<double>(e);
  const double magnitude = abs_d(ed);
  o.huge = abs_d(ad) > k_huge;
  o.has_dev = true;
  o.abs_dev = abs_d(ad - ed);
  const double tolerance = fma(rule.rtol, magnitude, rule.atol);
  o.tolerance = tolerance;
  o.rel_den = magnitude > rule.rel_floor ? magnitude : rule.rel_floor;
  o.mismatch = !(o.abs_dev <= tolerance);
  o.bad = o.mismatch;
  return o;
}

/// Counters and maxima of a set of elements (a thread's, a warp's, or all).
struct LocalMetrics {
  unsigned long long elements = 0;            ///< live elements
  unsigned long long untouched_elements = 0;  ///< elements of -1 rows
  unsigned long long nan = 0;
  unsigned long long inf = 0;
  unsigned long long huge = 0;
  unsigned long long unwritten = 0;
  unsigned long long untouched_rows_written = 0;
  unsigned long long mismatches = 0;
  unsigned long long reference_nonfinite = 0;
  double max_abs_dev = 0.0;
  double max_rel_dev = 0.0;
  double worst_dev_over_tolerance = 0.0;

  LP_HD void add(const ElementOutcome& o, bool live) {
    elements += live ? 1u : 0u;
    untouched_elements += live ? 0u : 1u;
    // Every other flag implies bad, except huge: the common element skips them all.
    if (o.bad || o.huge) {
      nan += o.nan ? 1u : 0u;
      inf += o.inf ? 1u : 0u;
      huge += o.huge ? 1u : 0u;
      unwritten += o.unwritten ? 1u : 0u;
      untouched_rows_written += o.untouched_write ? 1u : 0u;
      mismatches += o.mismatch ? 1u : 0u;
      reference_nonfinite += o.reference_nonfinite ? 1u : 0u;
    }
    if (o.has_dev) {
      max_abs_dev = o.abs_dev > max_abs_dev ? o.abs_dev : max_abs_dev;
      max_rel_dev = raise_ratio(max_rel_dev, o.abs_dev, o.rel_den);
      worst_dev_over_tolerance = raise_ratio(worst_dev_over_tolerance, o.abs_dev, o.tolerance);
    }
  }
};

/// Whether an element equal to its reference can skip compare_element's arithmetic
/// under `rule`: its tolerance atol + rtol |x| is then a number >= 0 for every finite x,
/// so a deviation of 0 is within it (a NaN or infinite atol or rtol is not).
LP_HD inline bool plain_tolerance(const ElementRule& rule) {
  return rule.atol >= 0.0 && rule.rtol >= 0.0 && rule.atol < static_cast<double>(INFINITY) &&
         rule.rtol < static_cast<double>(INFINITY);
}

/// Adds a live element whose bits equal its reference's to `m` without the
/// arithmetic, when that gives what add(compare_element(rule, bits, bits, true), true)
/// gives: the element counts (and counts as huge when it is), and no maximum moves,
/// since its deviation is 0 (raise_ratio keeps cur for num == 0). Returns false and
/// adds nothing for the poison, a non-finite value or a rule without plain_tolerance;
/// those go through compare_element. Most elements of a sweep are such: the device
/// kernel's cost per element was the arithmetic, not the loads.
LP_HD inline bool add_equal_live(const ElementRule& rule, std::uint32_t bits, LocalMetrics& m) {
  if ((rule.poison_measurable && bits == rule.poison) || !plain_tolerance(rule)) {
    return false;
  }
  const float v = bits_to_float(rule.dtype, bits);
  const std::uint32_t v32 = u32_from_float(v);
  if (f32_bits_nan(v32) || f32_bits_inf(v32)) {
    return false;
  }
  m.elements += 1u;
  m.huge += abs_d(static_cast<double>(v)) > k_huge ? 1u : 0u;
  return true;
}

inline constexpr unsigned long long k_no_index = ~0ull;

/// What one thread, warp or block of the device comparison found: its metrics, its
/// first bad element and the tiles it flagged first. The blocks leave theirs in a
/// scratch array that the last block adds up.
struct CompareShare {
  LocalMetrics metrics;
  unsigned long long first = k_no_index;
  unsigned long long failing_tiles = 0;

  LP_HD void merge(const CompareShare& o) {
    LocalMetrics& m = metrics;
    m.elements += o.metrics.elements;
    m.untouched_elements += o.metrics.untouched_elements;
    m.nan += o.metrics.nan;
    m.inf += o.metrics.inf;
    m.huge += o.metrics.huge;
    m.unwritten += o.metrics.unwritten;
    m.untouched_rows_written += o.metrics.untouched_rows_written;
    m.mismatches += o.metrics.mismatches;
    m.reference_nonfinite += o.metrics.reference_nonfinite;
    // Deviations are non-negative and never NaN (has_dev), so > orders them.
    m.max_abs_dev = o.metrics.max_abs_dev > m.max_abs_dev ? o.metrics.max_abs_dev : m.max_abs_dev;
    m.max_rel_dev = o.metrics.max_rel_dev > m.max_rel_dev ? o.metrics.max_rel_dev : m.max_rel_dev;
    m.worst_dev_over_tolerance = o.metrics.worst_dev_over_tolerance > m.worst_dev_over_tolerance
                                     ? o.metrics.worst_dev_over_tolerance
                                     : m.worst_dev_over_tolerance;
    first = o.first < first ? o.first : first;
    failing_tiles += o.failing_tiles;
  }
};

LP_HD inline unsigned long long double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned long long>(__double_as_longlong(d));
#else
  unsigned long long bits;
  std::memcpy(&bits, &d, sizeof bits);
  return bits;
#endif
}

LP_HD inline double double_from_bits(unsigned long long bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
#endif
}

/// The device's result block (counters, maxima as the bits of non-negative
/// doubles, which order like the doubles, and the first bad element), filled by
/// the host twin in the same form so one function turns either into CompareMetrics.
struct MetricsBlock {
  unsigned long long elements;
  unsigned long long untouched_elements;
  unsigned long long nan;
  unsigned long long inf;
  unsigned long long unwritten;
  unsigned long long untouched_rows_written;
  unsigned long long mismatches;
  unsigned long long reference_nonfinite;
  unsigned long long huge;
  unsigned long long failing_tiles;
  unsigned long long max_abs_dev_bits;
  unsigned long long max_rel_dev_bits;
  unsigned long long max_tol_ratio_bits;
  unsigned long long first_bad;  ///< row-major index, k_no_index when none
  unsigned int first_expected_bits;
  unsigned int first_actual_bits;
  unsigned int first_untouched_row;  ///< 1 when first_bad lies in a -1 row
  unsigned int blocks_done;          ///< the device's blocks that left their share (0 from the host)
};

}  // namespace lp::compare_detail
