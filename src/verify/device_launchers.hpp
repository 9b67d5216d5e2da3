#pragma once
// The host side of device_kernels.cu: launchers of its input and comparison kernels
// (reference_kernels.hpp declares the rest). They check only the launch itself;
// argument checking with readable messages is done by the public wrappers in the
// .cpp files. Internal to src/verify.

#include <cuda.h>

#include <cstddef>
#include <cstdint>

#include "verify/compare_element.hpp"
#include "model/dtype.hpp"
#include "verify/inputs.hpp"
#include "model/problem.hpp"

namespace lp::device_launch {

/// dst[i] = generated_bits(t, range, seed, tensor, i) for i < count.
void fill_generated(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                    std::uint32_t tensor, CUstream stream);

/// scales[i] = fp8_scale_value(seed, tensor, i) for i < count.
void fill_scales(float* scales, std::size_t count, std::uint64_t seed, std::uint32_t tensor, CUstream stream);

/// dst = round_to(t, q * scale of its block) over grid's elements (inputs.hpp).
void dequantize(const void* q, const float* scales, ScaleGrid grid, void* dst, DType t, CUstream stream);

/// dst[i] = round_to(to, src[i]) for i < count.
void convert(const void* src, DType from, void* dst, DType to, std::size_t count, CUstream stream);

/// Most blocks of one comparison: 132 SMs (an H100 SXM or H200) get about 8 each,
/// and the last block adds up as many shares.
inline constexpr unsigned long long k_compare_max_blocks = 1024;

/// Compares `count` elements (0 too) in one kernel and writes every field of *out:
/// the metrics, the first bad element and its bits. *out's blocks_done and
/// `tile_failed` must be zeros beforehand. `shares` is scratch of k_compare_max_blocks.
void compare(const compare_detail::KernelLayout& layout, const compare_detail::ElementRule& rule, const void* actual,
             const void* expected, const std::int32_t* lora_of, unsigned* tile_failed,
             compare_detail::CompareShare* shares, compare_detail::MetricsBlock* out, unsigned long long count,
             CUstream stream);

}  // namespace lp::device_launch
