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
using lp::compare_detail::CompareShare;
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

// lp_compare's blocks have at most this many warps (the launcher's k_threads / 32).
constexpr int k_max_warps = 32;

__device__ CompareShare shfl_down_share(const CompareShare& s, int offset) {
  CompareShare o;
  const LocalMetrics& m = s.metrics;
  o.metrics.elements = shfl_down_u64(m.elements, offset);
  o.metrics.untouched_elements = shfl_down_u64(m.untouched_elements, offset);
  o.metrics.nan = shfl_down_u64(m.nan, offset);
  o.metrics.inf = shfl_down_u64(m.inf, offset);
  o.metrics.huge = shfl_down_u64(m.huge, offset);
  o.metrics.unwritten = shfl_down_u64(m.unwritten, offset);
  o.metrics.untouched_rows_written = shfl_down_u64(m.untouched_rows_written, offset);
  o.metrics.mismatches = shfl_down_u64(m.mismatches, offset);
  o.metrics.reference_nonfinite = shfl_down_u64(m.reference_nonfinite, offset);
  o.metrics.max_abs_dev = shfl_down_f64(m.max_abs_dev, offset);
  o.metrics.max_rel_dev = shfl_down_f64(m.max_rel_dev, offset);
  o.metrics.worst_dev_over_tolerance = shfl_down_f64(m.worst_dev_over_tolerance, offset);
  o.first = shfl_down_u64(s.first, offset);
  o.failing_tiles = shfl_down_u64(s.failing_tiles, offset);
  return o;
}

__device__ CompareShare warp_sum(CompareShare s) {
  for (int offset = 16; offset > 0; offset /= 2) {
    s.merge(shfl_down_share(s, offset));
  }
  return s;
}

/// The sum over the block, in thread 0. Every thread of the block must call it (it
/// synchronises the block); `scratch` is the block's shared array of k_max_warps.
__device__ CompareShare block_sum(CompareShare s, CompareShare* scratch) {
  const unsigned warp = threadIdx.x / 32u;
  const unsigned warps = (blockDim.x + 31u) / 32u;
  s = warp_sum(s);
  __syncthreads();  // scratch may still be read from an earlier call
  if ((threadIdx.x & 31u) == 0u) {
    scratch[warp] = s;
  }
  __syncthreads();
  if (warp == 0) {
    s = threadIdx.x < warps ? scratch[threadIdx.x] : CompareShare{};
    s = warp_sum(s);
  }
  return s;
}

/// Another block's share, read past this SM's L1 (it was written by another SM).
__device__ CompareShare load_share(const CompareShare* from) {
  CompareShare s;
  const auto* words = reinterpret_cast<const volatile unsigned long long*>(from);
  auto* into = reinterpret_cast<unsigned long long*>(&s);
  for (std::size_t w = 0; w < sizeof(CompareShare) / sizeof(unsigned long long); ++w) {
    into[w] = words[w];
  }
  return s;
}

/// The comparison's result block from the sum of every share, with the first bad
/// element's bits and row kind, so the host copies back one struct and nothing else.
__device__ void write_block(const CompareShare& all, const KernelLayout& layout, DType dtype, const void* actual,
                            const void* expected, const std::int32_t* lora_of, MetricsBlock* out) {
  const LocalMetrics& m = all.metrics;
  out->elements = m.elements;
  out->untouched_elements = m.untouched_elements;
  out->nan = m.nan;
  out->inf = m.inf;
  out->huge = m.huge;
  out->unwritten = m.unwritten;
  out->untouched_rows_written = m.untouched_rows_written;
  out->mismatches = m.mismatches;
  out->reference_nonfinite = m.reference_nonfinite;
  out->failing_tiles = all.failing_tiles;
  out->max_abs_dev_bits = lp::compare_detail::double_bits(m.max_abs_dev);
  out->max_rel_dev_bits = lp::compare_detail::double_bits(m.max_rel_dev);
  out->max_tol_ratio_bits = lp::compare_detail::double_bits(m.worst_dev_over_tolerance);
  out->first_bad = all.first;
  if (all.first == lp::compare_detail::k_no_index) {
    return;
  }
  const Coord c = lp::compare_detail::decode(layout, all.first);
  out->first_expected_bits = load_bits(dtype, expected, all.first);
  out->first_actual_bits = load_bits(dtype, actual, all.first);
  out->first_untouched_row = lora_of[c.token] >= 0 ? 0u : 1u;
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

}  // extern "C"

namespace {

/// Judges one element into `mine`: element `i` of the output, at `column` of `row`.
__device__ void visit_element(const KernelLayout& layout, const ElementRule& rule, unsigned long long i,
                              std::int64_t row, std::int64_t token, std::int64_t column, std::uint32_t a,
                              std::uint32_t e, bool live, unsigned* tile_failed, CompareShare& mine) {
  const ElementOutcome o = lp::compare_detail::compare_element(rule, a, e, live);
  mine.metrics.add(o, live);
  if (!o.bad) {
    return;
  }
  mine.first = mine.first < i ? mine.first : i;
  // The slice only matters for a bad element's tile.
  int slice = layout.kind == 1 ? static_cast<int>(row / layout.num_tokens) : 0;
  while (layout.kind == 0 && slice + 1 < layout.num_slices && column >= layout.offset[slice + 1]) {
    ++slice;
  }
  const std::int64_t tile = lp::compare_detail::tile_index(layout, Coord{slice, token, column});
  // The plain read only saves atomics: flags only go 0 -> 1, and the exchange decides
  // who counts the tile.
  if (tile_failed[tile] == 0u && atomicExch(&tile_failed[tile], 1u) == 0u) {
    ++mine.failing_tiles;
  }
}

/// Elements [first, first + V) as raw bits: one 16-byte load of each tensor when V
/// fills it (the caller checked alignment), else V element loads.
template <int V>
__device__ void load_chunk(DType t, const void* data, unsigned long long first, std::uint32_t (&bits)[V]) {
  if constexpr (V == 1) {
    bits[0] = load_bits(t, data, first);
  } else {
    const uint4 word = *reinterpret_cast<const uint4*>(static_cast<const unsigned char*>(data) +
                                                      first * (16 / V));
    const std::uint32_t w[4] = {word.x, word.y, word.z, word.w};
    for (int j = 0; j < V; ++j) {
      bits[j] = V == 4 ? w[j] : (w[j / 2] >> (16 * (j % 2))) & 0xFFFFu;  // little-endian halves
    }
  }
}

/// Every chunk of V elements of the output, over all threads of the grid: consecutive
/// threads read consecutive 16 bytes, and each has V elements of both tensors in
/// flight (one element at a time left the kernel waiting on memory at a tenth of the
/// bandwidth). A chunk never straddles a row (row_stride % V == 0). Index: 32-bit
/// arithmetic for outputs of fewer than 2^31 elements.
template <class Index, int V>
__device__ void compare_chunks(const KernelLayout& layout, const ElementRule& rule, const void* actual,
                               const void* expected, const std::int32_t* lora_of, unsigned* tile_failed,
                               unsigned long long count, CompareShare& mine) {
  const auto width = static_cast<Index>(layout.row_stride);
  const auto tokens = static_cast<Index>(layout.num_tokens);
  const auto chunks = static_cast<Index>(count / V);
  const auto stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index k = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; k < chunks; k += stride) {
    const Index first = k * V;
    const Index row = first / width;
    const Index column = first - row * width;
    const Index token = layout.kind == 1 ? row % tokens : row;
    const bool live = lora_of[token] >= 0;
    std::uint32_t a[V];
    std::uint32_t e[V];
    load_chunk<V>(rule.dtype, actual, first, a);
    load_chunk<V>(rule.dtype, expected, first, e);
    for (int j = 0; j < V; ++j) {
      // An element equal to its reference, the common one, mostly needs no arithmetic.
      if (a[j] == e[j]) {
        if (!live) {
          ++mine.metrics.untouched_elements;  // a -1 row's element that kept its bits
          continue;
        }
        if (lp::compare_detail::add_equal_live(rule, a[j], mine.metrics)) {
          continue;
        }
      }
      visit_element(layout, rule, first + j, row, token, column + j, a[j], e[j], live, tile_failed, mine);
    }
  }
}

}  // namespace

extern "C" {

__global__ void lp_compare(KernelLayout layout, ElementRule rule, const void* actual, const void* expected,
                           const std::int32_t* lora_of, unsigned* tile_failed, CompareShare* shares,
                           MetricsBlock* out, unsigned long long count, int vector) {
  CompareShare mine;
  // 32-bit indices below 2^31 elements: k + stride (at most 2^18) then cannot wrap.
  const bool narrow = count < (1ull << 31);
  if (vector == 8) {
    narrow ? compare_chunks<std::uint32_t, 8>(layout, rule, actual, expected, lora_of, tile_failed, count, mine)
           : compare_chunks<std::uint64_t, 8>(layout, rule, actual, expected, lora_of, tile_failed, count, mine);
  } else if (vector == 4) {
    narrow ? compare_chunks<std::uint32_t, 4>(layout, rule, actual, expected, lora_of, tile_failed, count, mine)
           : compare_chunks<std::uint64_t, 4>(layout, rule, actual, expected, lora_of, tile_failed, count, mine);
  } else {
    narrow ? compare_chunks<std::uint32_t, 1>(layout, rule, actual, expected, lora_of, tile_failed, count, mine)
           : compare_chunks<std::uint64_t, 1>(layout, rule, actual, expected, lora_of, tile_failed, count, mine);
  }
  // Each block leaves its share; the last block to finish adds them up (one atomic per
  // block, where every warp used to add a dozen to one MetricsBlock).
  // Raw storage: a __shared__ array may not have CompareShare's initialisers.
  __shared__ alignas(CompareShare) unsigned char warp_storage[k_max_warps * sizeof(CompareShare)];
  __shared__ bool last;
  auto* const warp_shares = reinterpret_cast<CompareShare*>(warp_storage);
  mine = block_sum(mine, warp_shares);
  if (threadIdx.x == 0) {
    shares[blockIdx.x] = mine;
    __threadfence();  // the share is visible before the count says so
    last = atomicAdd(&out->blocks_done, 1u) + 1 == gridDim.x;
  }
  __syncthreads();
  if (!last) {
    return;
  }
  __threadfence();
  CompareShare all;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += blockDim.x) {
    all.merge(load_share(shares + b));
  }
  all = block_sum(all, warp_shares);
  if (threadIdx.x == 0) {
    write_block(all, layout, rule.dtype, actual, expected, lora_of, out);
  }
}

}  // extern "C"
