// A kernel fault must surface as a StickyCudaError named after the driver code. In
// its own executable (and process): after the fault the context is dead.

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>

#include "support/gpu.hpp"
#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/driver.hpp"
#include "cuda/module.hpp"
#include "cuda/stream.hpp"
#include "ptx_fixtures.hpp"

namespace lp {
namespace {

TEST(CudaFault, IllegalAddressIsStickyAndNamed) {
  LP_REQUIRE_GPU();
  const PrimaryContext context(0);
  const Module module(test_ptx::k_store_kernel);
  const Stream stream;
  CUdeviceptr address = 16;  // never mapped
  std::uint32_t value = 1;
  std::array<void*, 2> args = {&address, &value};
  launch_kernel(module.function("lp_store"), LaunchConfig{}, args.data(), stream.get());
  try {
    stream.synchronize();
    FAIL() << "a store to address 16 did not fault";
  } catch (const StickyCudaError& e) {
    EXPECT_EQ(e.result(), CUDA_ERROR_ILLEGAL_ADDRESS) << e.what();
    EXPECT_EQ(e.fault_reason(), "fault: CUDA_ERROR_ILLEGAL_ADDRESS");
    EXPECT_NE(std::string(e.what()).find("cuStreamSynchronize"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lp
