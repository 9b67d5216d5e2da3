// Host side of device_kernels.cu: the embedded fatbin, loaded once per process as a
// context-independent library (cuLibraryLoadData: the driver loads it into each
// context that launches one of its kernels, so a context made later, or a primary
// context retained again, never sees a stale handle), and one launcher per kernel.

#include <algorithm>
#include <mutex>
#include <string>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "cuda/module.hpp"
#include "util/error.hpp"
#include "verify/device_launchers.hpp"
#include "verify/reference_kernels.hpp"

// verify_kernels.S (generated): the fatbin nvcc made of device_kernels.cu.
extern "C" const unsigned char lp_verify_fatbin_begin[];

namespace lp {
namespace {

constexpr unsigned k_threads = 256;

// The kernels of device_kernels.cu, by their extern "C" names.
struct VerifyKernels {
  CUkernel fill_generated = nullptr;
  CUkernel convert = nullptr;
  CUkernel fill_scales = nullptr;
  CUkernel dequantize = nullptr;
  CUkernel gather_rows = nullptr;
  CUkernel finish_expand = nullptr;
  CUkernel scale_rows = nullptr;
  CUkernel scatter_rows_f32 = nullptr;
  CUkernel compare = nullptr;
};

VerifyKernels load_kernels() {
  const DriverApi& drv = driver();
  // Never unloaded: the kernels may be launched until the process ends.
  CUlibrary library = nullptr;
  LP_CU_CHECK(drv.cuLibraryLoadData(&library, lp_verify_fatbin_begin, nullptr, nullptr, 0, nullptr, nullptr, 0));
  auto kernel = [&](const char* name) {
    CUkernel k = nullptr;
    const CUresult result = drv.cuLibraryGetKernel(&k, library, name);
    if (result != CUDA_SUCCESS) {
      throw Error(fmt::format("the embedded verify kernels have no kernel {} (CUresult {})", name,
                              static_cast<int>(result)));
    }
    return k;
  };
  VerifyKernels k;
  k.fill_generated = kernel("lp_fill_generated");
  k.convert = kernel("lp_convert");
  k.fill_scales = kernel("lp_fill_scales");
  k.dequantize = kernel("lp_dequantize");
  k.gather_rows = kernel("lp_gather_rows");
  k.finish_expand = kernel("lp_finish_expand");
  k.scale_rows = kernel("lp_scale_rows");
  k.scatter_rows_f32 = kernel("lp_scatter_rows_f32");
  k.compare = kernel("lp_compare");
  return k;
}

const VerifyKernels& kernels() {
  static std::once_flag once;
  static VerifyKernels loaded;
  std::call_once(once, [] { loaded = load_kernels(); });
  return loaded;
}

// Enough blocks to fill an H200 several times over (at most `cap`); the grid-stride
// loops do the rest.
unsigned blocks_for(std::uint64_t count, std::uint64_t cap) {
  const std::uint64_t wanted = (count + k_threads - 1) / k_threads;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(wanted, 1, cap));
}

// A CUkernel launches like a CUfunction in the current context (CUDA 12.0+).
// Each argument must have its kernel parameter's exact type: the driver copies
// sizeof(parameter) bytes from each pointer.
template <typename... Args>
void launch(CUkernel kernel, unsigned blocks, unsigned threads, CUstream stream, const Args&... args) {
  void* params[] = {const_cast<void*>(static_cast<const void*>(&args))...};
  LaunchConfig config;
  config.grid[0] = blocks;
  config.block[0] = threads;
  launch_kernel(reinterpret_cast<CUfunction>(kernel), config, params, stream);
}

}  // namespace

namespace device_launch {

void fill_generated(void* dst, DType t, std::size_t count, ValueRange range, std::uint64_t seed,
                    std::uint32_t tensor, CUstream stream) {
  if (count == 0) {
    return;
  }
  launch(kernels().fill_generated, blocks_for(count, 4096), k_threads, stream, dst, t, count, range, seed, tensor);
}

void fill_scales(float* scales, std::size_t count, std::uint64_t seed, std::uint32_t tensor, CUstream stream) {
  if (count == 0) {
    return;
  }
  launch(kernels().fill_scales, blocks_for(count, 4096), k_threads, stream, scales, count, seed, tensor);
}

void dequantize(const void* q, const float* scales, ScaleGrid grid, void* dst, DType t, CUstream stream) {
  const auto count = static_cast<std::uint64_t>(grid.batch * grid.rows * grid.cols);
  if (count == 0) {
    return;
  }
  launch(kernels().dequantize, blocks_for(count, 4096), k_threads, stream, q, scales, grid, dst, t);
}

void convert(const void* src, DType from, void* dst, DType to, std::size_t count, CUstream stream) {
  if (count == 0) {
    return;
  }
  launch(kernels().convert, blocks_for(count, 4096), k_threads, stream, src, from, dst, to, count);
}

void compare(const compare_detail::KernelLayout& layout, const compare_detail::ElementRule& rule, const void* actual,
             const void* expected, const std::int32_t* lora_of, unsigned* tile_failed,
             compare_detail::CompareShare* shares, compare_detail::MetricsBlock* out, unsigned long long count,
             CUstream stream) {
  // An empty output still gets its one block: the kernel's last block writes *out.
  if (count > 0 && (layout.row_stride <= 0 || count % static_cast<unsigned long long>(layout.row_stride) != 0)) {
    throw Error("compare: the output is not a whole number of rows");
  }
  static_assert(k_threads % 32 == 0 && k_threads / 32 <= 32, "lp_compare sums at most 32 warps per block");
  // 16-byte loads of both tensors where a row is whole 16-byte words and both start
  // on one (the allocator aligns to 256 bytes); else one element at a time.
  const std::size_t size = dtype_size(rule.dtype);
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool whole_words = count > 0 && (size == 2 || size == 4) &&
                           (static_cast<std::uint64_t>(layout.row_stride) * size) % 16 == 0;
  const int vector = whole_words && aligned(actual) && aligned(expected) ? static_cast<int>(16 / size) : 1;
  const unsigned long long chunks = count / static_cast<unsigned long long>(vector);
  const auto blocks = static_cast<unsigned>(
      std::clamp<unsigned long long>((chunks + k_threads - 1) / k_threads, 1, k_compare_max_blocks));
  launch(kernels().compare, blocks, k_threads, stream, layout, rule, actual, expected, lora_of, tile_failed, shares,
         out, count, vector);
}

}  // namespace device_launch

namespace reference_detail {

void gather_rows(const void* src, DType t, std::int64_t src_stride, const std::int32_t* rows, std::int64_t n_rows,
                 std::int64_t width, void* dst, const Stream& stream, std::int64_t row_divisor) {
  if (n_rows * width == 0) {
    return;
  }
  launch(kernels().gather_rows, blocks_for(static_cast<std::uint64_t>(n_rows * width), 8192), k_threads,
         stream.get(), src, t, src_stride, rows, row_divisor, n_rows, width, dst);
}

void finish_expand(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, DType w,
                   bool add_inputs, const void* y_in, void* y, std::int64_t row_stride, std::int64_t offset,
                   const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  launch(kernels().finish_expand, blocks_for(static_cast<std::uint64_t>(n_rows * width), 8192), k_threads,
         stream.get(), acc, n_rows, width, rows, w, add_inputs, y_in, y, row_stride, offset);
}

void scale_rows(float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, const float* weights,
                const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  launch(kernels().scale_rows, blocks_for(static_cast<std::uint64_t>(n_rows * width), 8192), k_threads,
         stream.get(), acc, n_rows, width, rows, weights);
}

void scatter_rows_f32(const float* acc, std::int64_t n_rows, std::int64_t width, const std::int32_t* rows, float* out,
                      const Stream& stream) {
  if (n_rows * width == 0) {
    return;
  }
  launch(kernels().scatter_rows_f32, blocks_for(static_cast<std::uint64_t>(n_rows * width), 8192), k_threads,
         stream.get(), acc, n_rows, width, rows, out);
}

}  // namespace reference_detail
}  // namespace lp
