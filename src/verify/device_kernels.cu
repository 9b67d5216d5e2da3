// Every kernel of src/verify's device side: input generation and dtype conversion
// (inputs.hpp), the small steps around the reference GEMMs (reference_kernels.hpp)
// and the comparison (compare.hpp). nvcc compiles this file alone into a fatbin
// (sm_90a code, compute_90 PTX) that the build embeds; device_kernels.cpp loads it
// through the driver API and launches the kernels by their extern "C" names, so the
// tool links no CUDA library at all. Each kernel is a grid-stride loop: its results
// do not depend on the launch shape the host picks.

#include <cstdint>

#include "model/dtype.hpp"
#include "verify/compare_element.hpp"
#include "verify/inputs.hpp"

using lp::DType;
using lp::ValueRange;
using lp::bits_to_float;
using lp::float_to_bits;
using lp::load_bits;
using lp::store_bits;
using lp::compare_detail::Coord;
using lp::compare_detail::ElementOutcome;
using lp::compare_detail::ElementRule;
using lp::compare_detail::KernelLayout;
using lp::compare_detail::LocalMetrics;
using lp::compare_detail::MetricsBlock;

namespace {

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

}  // namespace

extern "C" {

__global__ void lp_fill_generated(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                                      std::uint32_t tensor) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store_bits(t, dst, i, lp::generated_bits(t, range, seed, tensor, i));
  }
}

__global__ void lp_convert(const void* src, DType from, void* dst, DType to, std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    store_bits(to, dst, i, float_to_bits(to, bits_to_float(from, load_bits(from, src, i))));
  }
}

__global__ void lp_fill_scales(float* scales, std::size_t count, std::uint64_t seed, std::uint32_t tensor) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    scales[i] = lp::fp8_scale_value(seed, tensor, i);
  }
}

__global__ void lp_dequantize(const void* q, const float* scales, lp::ScaleGrid grid, void* dst, DType t) {
  const std::int64_t count = grid.batch * grid.rows * grid.cols;
  const std::int64_t row_groups = (grid.rows + grid.group_rows - 1) / grid.group_rows;
  const std::int64_t col_groups = (grid.cols + grid.group_cols - 1) / grid.group_cols;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t col = i % grid.cols;
    const std::int64_t row = (i / grid.cols) % grid.rows;
    const std::int64_t batch = i / (grid.cols * grid.rows);
    const float scale = scales[(batch * row_groups + row / grid.group_rows) * col_groups + col / grid.group_cols];
    const float value = bits_to_float(DType::e4m3, load_bits(DType::e4m3, q, static_cast<std::size_t>(i)));
    store_bits(t, dst, static_cast<std::size_t>(i), float_to_bits(t, value * scale));
  }
}

__global__ void lp_gather_rows(const void* src, DType t, std::int64_t src_stride, const std::int32_t* rows,
                                   std::int64_t row_divisor, std::int64_t n_rows, std::int64_t width, void* dst) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t col = i - row * width;
    const auto from = static_cast<std::size_t>(rows[row] / row_divisor * src_stride + col);
    store_bits(t, dst, static_cast<std::size_t>(i), load_bits(t, src, from));
  }
}

__global__ void lp_finish_expand(const float* acc, std::int64_t n_rows, std::int64_t width,
                                     const std::int32_t* rows, DType w, bool add_inputs, const void* y_in, void* y,
                                     std::int64_t row_stride, std::int64_t offset) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t n = i - row * width;
    const auto at = static_cast<std::size_t>(rows[row] * row_stride + offset + n);
    std::uint32_t bits = float_to_bits(w, acc[i]);
    if (add_inputs) {
      // docs/problem.md: the sum of two W values computed in fp32, then rounded.
      const float sum = bits_to_float(w, bits) + bits_to_float(w, load_bits(w, y_in, at));
      bits = float_to_bits(w, sum);
    }
    store_bits(w, y, at, bits);
  }
}

__global__ void lp_scale_rows(float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows,
                                  const float* weights) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    acc[i] *= weights[rows[i / width]];
  }
}

__global__ void lp_scatter_rows_f32(const float* acc, std::int64_t n_rows, std::int64_t width,
                                    const std::int32_t* rows, float* out) {
  const std::int64_t count = n_rows * width;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t row = i / width;
    const std::int64_t col = i - row * width;
    out[rows[row] * width + col] = acc[i];
  }
}

__global__ void lp_compare(KernelLayout layout, ElementRule rule, const void* actual, const void* expected,
                               const std::int32_t* lora_of, unsigned* tile_failed, MetricsBlock* out,
                               unsigned long long count) {
  LocalMetrics m;
  unsigned long long first = lp::compare_detail::k_no_index;
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
      const ElementOutcome o = lp::compare_detail::compare_element(rule, a, e, live);
      m.add(o, live);
      if (o.bad) {
        first = first < i ? first : i;
        const std::int64_t tile = lp::compare_detail::tile_index(layout, c);
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
    atomicMax(&out->max_abs_dev_bits, lp::compare_detail::double_bits(m.max_abs_dev));
    atomicMax(&out->max_rel_dev_bits, lp::compare_detail::double_bits(m.max_rel_dev));
    atomicMax(&out->max_tol_ratio_bits, lp::compare_detail::double_bits(m.worst_dev_over_tolerance));
    if (first != lp::compare_detail::k_no_index) {
      atomicMin(&out->first_bad, first);
    }
  }
}

// After the reduction: fetch the first bad element's bits and row kind, so the
// host copies back one struct and nothing else.
__global__ void lp_compare_finish(KernelLayout layout, DType dtype, const void* actual, const void* expected,
                              const std::int32_t* lora_of, MetricsBlock* out) {
  if (out->first_bad == lp::compare_detail::k_no_index) {
    return;
  }
  const Coord c = lp::compare_detail::decode(layout, out->first_bad);
  out->first_expected_bits = load_bits(dtype, expected, out->first_bad);
  out->first_actual_bits = load_bits(dtype, actual, out->first_bad);
  out->first_untouched_row = lora_of[c.token] >= 0 ? 0u : 1u;
}

}  // extern "C"
