// GPU tests of the RAII layer (label `gpu`). Each one says "skipped: no GPU" on a
// machine without a usable CUDA device.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <optional>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/gpu.hpp"
#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/cublas.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "cuda/memory.hpp"
#include "cuda/module.hpp"
#include "cuda/stream.hpp"
#include "ptx_fixtures.hpp"

namespace lp {
namespace {

class CudaGpu : public testing::Test {
 protected:
  void SetUp() override {
    LP_REQUIRE_GPU();
    m_context.emplace(0);
  }
  std::optional<PrimaryContext> m_context;
};

TEST_F(CudaGpu, DriverInitDisabledTheJitCache) {
  const DriverStatus& status = init_driver(false);
  EXPECT_FALSE(status.jit_cache_allowed);
  EXPECT_EQ(status.cache_disable_env, "1");
  EXPECT_STREQ(std::getenv("CUDA_CACHE_DISABLE"), "1");
  EXPECT_TRUE(status.module_loading_mode == "lazy" || status.module_loading_mode == "eager")
      << status.module_loading_mode;
  EXPECT_GE(status.driver_version, 13000) << "this binary uses CUDA 13 headers";
  EXPECT_GT(status.device_count, 0);
  EXPECT_NE(status.library.find("libcuda.so"), std::string::npos) << status.library;
  EXPECT_THROW(static_cast<void>(init_driver(true)), Error) << "a second, different cache policy must be refused";
}

TEST_F(CudaGpu, DeviceInfoIsFilledIn) {
  const DeviceInfo info = query_device_info(0);
  EXPECT_FALSE(info.name.empty());
  EXPECT_EQ(info.uuid.rfind("GPU-", 0), 0u) << info.uuid;
  EXPECT_EQ(info.uuid.size(), 40u) << info.uuid;
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.sm_clock_khz, 0);
  EXPECT_GT(info.memory_clock_khz, 0);
  EXPECT_GT(info.total_memory_bytes, info.free_memory_bytes);
  EXPECT_GE(info.cc_major, 7);
  EXPECT_GE(info.runtime_version, 13000);
  EXPECT_FALSE(info.cublas_version.empty());
  EXPECT_GT(info.peak_bandwidth_gbps(), 100.0);
  std::printf("device 0: %s %s cc %d.%d, %d SMs, %.0f GB/s peak, driver %s (%s), runtime %s, cuBLAS %s\n",
              info.name.c_str(), info.uuid.c_str(), info.cc_major, info.cc_minor, info.sm_count,
              info.peak_bandwidth_gbps(), format_cuda_version(info.driver_version).c_str(), info.kernel_driver.c_str(),
              format_cuda_version(info.runtime_version).c_str(), info.cublas_version.c_str());
}

TEST_F(CudaGpu, BufferRoundTripAndFills) {
  const Stream stream;
  const std::vector<std::uint32_t> values = {1, 2, 3, 0xDEADBEEF};
  DeviceBuffer buffer = upload(std::span<const std::uint32_t>(values), stream);
  EXPECT_EQ(buffer.bytes(), 16u);
  EXPECT_EQ(download<std::uint32_t>(buffer, stream), values);
  buffer.fill_u16(0xFFA5, stream);
  EXPECT_EQ(download<std::uint32_t>(buffer, stream), std::vector<std::uint32_t>(4, 0xFFA5FFA5u));
  buffer.fill_u32(0xFFB1DEADu, stream);
  EXPECT_EQ(download<std::uint32_t>(buffer, stream), std::vector<std::uint32_t>(4, 0xFFB1DEADu));
  DeviceBuffer copy(16);
  copy.copy_from(buffer, stream);
  EXPECT_EQ(download<std::uint32_t>(copy, stream), std::vector<std::uint32_t>(4, 0xFFB1DEADu));
  DeviceBuffer moved = std::move(copy);
  EXPECT_EQ(copy.get(), 0u);
  EXPECT_EQ(moved.bytes(), 16u);
  EXPECT_THROW(static_cast<void>(moved.view<std::array<char, 3>>()), Error);
  EXPECT_THROW(moved.copy_from_host(values.data(), 20, stream), Error);
}

TEST_F(CudaGpu, OutOfMemoryIsARecoverableCudaError) {
  try {
    DeviceBuffer huge(std::size_t{1} << 50);
    FAIL() << "a 1 PiB allocation succeeded";
  } catch (const StickyCudaError& e) {
    FAIL() << "out of memory must not be sticky: " << e.what();
  } catch (const CudaError& e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_OUT_OF_MEMORY) << e.what();
  }
  DeviceBuffer after(64);  // the context is still usable
  EXPECT_NE(after.get(), 0u);
}

TEST_F(CudaGpu, ModuleFromPtxLaunchesAndEventsTime) {
  const Module module(test_ptx::k_store_kernel);
  const CUfunction function = module.function("lp_store");
  EXPECT_THROW(static_cast<void>(module.function("no_such_kernel")), Error);
  const Stream stream;
  DeviceBuffer out(4);
  CUdeviceptr address = out.get();
  std::uint32_t value = 0x12345678u;
  std::array<void*, 2> args = {&address, &value};
  const Event start;
  const Event stop;
  start.record(stream);
  launch_kernel(function, LaunchConfig{}, args.data(), stream.get());
  stop.record(stream);
  EXPECT_GE(elapsed_ms(start, stop), 0.0f);
  EXPECT_EQ(download<std::uint32_t>(out, stream), std::vector<std::uint32_t>{0x12345678u});
}

TEST_F(CudaGpu, LinkerTurnsPtxIntoALoadableCubin) {
  Linker linker;
  linker.add_ptx(test_ptx::k_store_kernel, "store.ptx");
  const std::string cubin = linker.complete();
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f" "ELF", 4)) << "a cubin is an ELF file";
  const Module module(cubin);
  EXPECT_NE(module.function("lp_store"), nullptr);
}

TEST_F(CudaGpu, LinkerErrorCarriesThePtxasLog) {
  Linker linker;
  try {
    linker.add_ptx(test_ptx::k_broken_kernel, "broken.ptx");
    static_cast<void>(linker.complete());
    FAIL() << "broken PTX linked";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("JIT error log"), std::string::npos) << e.what();
  }
}

TEST_F(CudaGpu, CublasHandleIsBoundToTheStream) {
  const Stream stream;
  const CublasHandle handle(stream);
  EXPECT_EQ(handle.stream(), stream.get());
  cublasMath_t mode{};
  LP_CUBLAS_CHECK(cublasGetMathMode(handle.get(), &mode));
  EXPECT_EQ(mode & 0xF, CUBLAS_PEDANTIC_MATH);
}

}  // namespace
}  // namespace lp
