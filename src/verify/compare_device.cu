// The comparison kernel: one pass over the output (a row per block, its columns over
// the threads), per-thread counters, a warp reduction, one set of atomics per warp.
// Only the MetricsBlock comes back.

#include <algorithm>

#include "cuda/check.hpp"
#include "util/error.hpp"
#include "verify/compare_element.hpp"
#include "verify/device_launchers.hpp"

namespace lp::device_launch {
namespace {

using compare_detail::Coord;
using compare_detail::ElementOutcome;
using compare_detail::ElementRule;
using compare_detail::KernelLayout;
using compare_detail::LocalMetrics;
using compare_detail::MetricsBlock;

constexpr int k_threads = 256;
constexpr unsigned k_full_mask = 0xFFFFFFFFu;

__device__ unsigned long long shfl_down_u64(unsigned long long v, int offset) {
  return __shfl_down_sync(k_full_mask, v, offset);
}

__device__ double shfl_down_f64(double v, int offset) { return __shfl_down_sync(k_full_mask, v, offset); }

__device__ void merge_from_lane(LocalMetrics& m, int offset) {
  m.elements += shfl_down_u64(m.elements, offset);
  m.untouched_elements += shfl_down_u64(m.untouched_elements, offset);
  m.nan += shfl_down_u64(m.nan, offset);
  m.inf += shfl_down_u64(m.inf, offset);
  m.huge += shfl_down_u64(m.huge, offset);
  m.unwritten += shfl_down_u64(m.unwritten, offset);
  m.untouched_rows_written += shfl_down_u64(m.untouched_rows_written, offset);
  m.mismatches += shfl_down_u64(m.mismatches, offset);
  m.reference_nonfinite += shfl_down_u64(m.reference_nonfinite, offset);
  m.max_abs_dev = fmax(m.max_abs_dev, shfl_down_f64(m.max_abs_dev, offset));
  m.max_rel_dev = fmax(m.max_rel_dev, shfl_down_f64(m.max_rel_dev, offset));
  m.worst_dev_over_tolerance = fmax(m.worst_dev_over_tolerance, shfl_down_f64(m.worst_dev_over_tolerance, offset));
}

__device__ void add_if(unsigned long long* target, unsigned long long value) {
  if (value != 0) {
    atomicAdd(target, value);
  }
}

__global__ void compare_kernel(KernelLayout layout, ElementRule rule, const void* actual, const void* expected,
                               const std::int32_t* lora_of, unsigned* tile_failed, MetricsBlock* out,
                               unsigned long long count) {
  LocalMetrics m;
  unsigned long long first = compare_detail::k_no_index;
  // One row (a token's, or for slice-major a slice's token's) per block at a time, its
  // columns over the threads: the coordinates come without a division per element
  // (decode() divides by the row stride, which made the kernel compute-bound).
  const std::int64_t width = layout.row_stride;
  const auto rows = static_cast<std::int64_t>(count / static_cast<unsigned long long>(width));
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const std::int64_t token = layout.kind == 1 ? row % layout.num_tokens : row;
    const int row_slice = layout.kind == 1 ? static_cast<int>(row / layout.num_tokens) : 0;
    const bool live = lora_of[token] >= 0;
    for (std::int64_t column = threadIdx.x; column < width; column += blockDim.x) {
      int slice = row_slice;
      while (layout.kind == 0 && slice + 1 < layout.num_slices && column >= layout.offset[slice + 1]) {
        ++slice;
      }
      const Coord c{slice, token, column};
      const auto i = static_cast<unsigned long long>(row * width + column);
      const std::uint32_t a = load_bits(rule.dtype, actual, i);
      const std::uint32_t e = load_bits(rule.dtype, expected, i);
      const ElementOutcome o = compare_detail::compare_element(rule, a, e, live);
      m.add(o, live);
      if (o.bad) {
        first = first < i ? first : i;
        const std::int64_t tile = compare_detail::tile_index(layout, c);
        // The plain read only saves atomics: flags only go 0 -> 1, and the exchange
        // decides who counts the tile.
        if (tile_failed[tile] == 0u && atomicExch(&tile_failed[tile], 1u) == 0u) {
          atomicAdd(&out->failing_tiles, 1ull);
        }
      }
    }
  }
  // Every lane reaches this point (the loop has no early exit), as the full-mask
  // shuffles require.
  for (int offset = 16; offset > 0; offset /= 2) {
    merge_from_lane(m, offset);
    const unsigned long long other = shfl_down_u64(first, offset);
    first = first < other ? first : other;
  }
  if ((threadIdx.x & 31u) == 0u) {
    add_if(&out->elements, m.elements);
    add_if(&out->untouched_elements, m.untouched_elements);
    add_if(&out->nan, m.nan);
    add_if(&out->inf, m.inf);
    add_if(&out->huge, m.huge);
    add_if(&out->unwritten, m.unwritten);
    add_if(&out->untouched_rows_written, m.untouched_rows_written);
    add_if(&out->mismatches, m.mismatches);
    add_if(&out->reference_nonfinite, m.reference_nonfinite);
    // Non-negative doubles order like their bit patterns.
    atomicMax(&out->max_abs_dev_bits, compare_detail::double_bits(m.max_abs_dev));
    atomicMax(&out->max_rel_dev_bits, compare_detail::double_bits(m.max_rel_dev));
    atomicMax(&out->max_tol_ratio_bits, compare_detail::double_bits(m.worst_dev_over_tolerance));
    if (first != compare_detail::k_no_index) {
      atomicMin(&out->first_bad, first);
    }
  }
}

// After the reduction: fetch the first bad element's bits and row kind, so the
// host copies back one struct and nothing else.
__global__ void finish_kernel(KernelLayout layout, DType dtype, const void* actual, const void* expected,
                              const std::int32_t* lora_of, MetricsBlock* out) {
  if (out->first_bad == compare_detail::k_no_index) {
    return;
  }
  const Coord c = compare_detail::decode(layout, out->first_bad);
  out->first_expected_bits = load_bits(dtype, expected, out->first_bad);
  out->first_actual_bits = load_bits(dtype, actual, out->first_bad);
  out->first_untouched_row = lora_of[c.token] >= 0 ? 0u : 1u;
}

}  // namespace

void compare(const compare_detail::KernelLayout& layout, const compare_detail::ElementRule& rule, const void* actual,
             const void* expected, const std::int32_t* lora_of, unsigned* tile_failed,
             compare_detail::MetricsBlock* out, unsigned long long count, cudaStream_t stream) {
  if (count == 0) {
    return;
  }
  if (layout.row_stride <= 0 || count % static_cast<unsigned long long>(layout.row_stride) != 0) {
    throw Error("compare: the output is not a whole number of rows");
  }
  const auto blocks =
      static_cast<unsigned>(std::clamp<unsigned long long>(count / static_cast<unsigned long long>(layout.row_stride), 1, 16384));
  compare_kernel<<<blocks, k_threads, 0, stream>>>(layout, rule, actual, expected, lora_of, tile_failed, out, count);
  LP_CUDA_CHECK(cudaGetLastError());
  finish_kernel<<<1, 1, 0, stream>>>(layout, rule.dtype, actual, expected, lora_of, out);
  LP_CUDA_CHECK(cudaGetLastError());
}

}  // namespace lp::device_launch
