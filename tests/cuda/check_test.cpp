// CPU tests of the error layer: they run on the CI machine without libcuda.so.1.

#include "cuda/check.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <string>

#include "cuda/cublas.hpp"
#include "support/gpu.hpp"
#include "cuda/driver.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

TEST(IsSticky, ContextKillingErrorsAreSticky) {
  for (const CUresult r : {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS,
                           CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_ASSERT, CUDA_ERROR_HARDWARE_STACK_ERROR,
                           CUDA_ERROR_INVALID_PC, CUDA_ERROR_INVALID_ADDRESS_SPACE, CUDA_ERROR_LAUNCH_TIMEOUT}) {
    EXPECT_TRUE(is_sticky(r)) << r;
  }
}

TEST(IsSticky, RecoverableErrorsAreNot) {
  for (const CUresult r : {CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_INVALID_VALUE, CUDA_ERROR_NOT_FOUND,
                           CUDA_ERROR_NO_BINARY_FOR_GPU, CUDA_ERROR_INVALID_PTX, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES}) {
    EXPECT_FALSE(is_sticky(r)) << r;
  }
}

TEST(StickyName, ComesFromOurTableWithoutADriver) {
  EXPECT_STREQ(sticky_error_name(CUDA_ERROR_ILLEGAL_ADDRESS), "CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_STREQ(sticky_error_name(CUDA_ERROR_MISALIGNED_ADDRESS), "CUDA_ERROR_MISALIGNED_ADDRESS");
  EXPECT_EQ(sticky_error_name(CUDA_ERROR_OUT_OF_MEMORY), nullptr);
}

CUresult fake_driver_call(CUresult result, int& calls) {
  ++calls;
  return result;
}

TEST(CuCheck, EvaluatesOnceAndPassesSuccess) {
  int calls = 0;
  EXPECT_NO_THROW(LP_CU_CHECK(fake_driver_call(CUDA_SUCCESS, calls)));
  EXPECT_EQ(calls, 1);
}

TEST(CuCheck, StickyErrorThrowsStickyWithFaultReason) {
  int calls = 0;
  try {
    LP_CU_CHECK(fake_driver_call(CUDA_ERROR_ILLEGAL_ADDRESS, calls));
    FAIL() << "LP_CU_CHECK did not throw";
  } catch (const StickyCudaError& e) {
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(e.result(), CUDA_ERROR_ILLEGAL_ADDRESS);
    EXPECT_EQ(e.api(), CudaApi::driver);
    EXPECT_EQ(e.fault_reason(), "fault: CUDA_ERROR_ILLEGAL_ADDRESS");
    const std::string what = e.what();
    EXPECT_NE(what.find("tests/cuda/check_test.cpp:"), std::string::npos) << what;
    EXPECT_NE(what.find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << what;
    EXPECT_NE(what.find("`fake_driver_call(CUDA_ERROR_ILLEGAL_ADDRESS, calls)`"), std::string::npos) << what;
  }
}

TEST(CuCheck, OrdinaryErrorIsARecordableError) {
  int calls = 0;
  try {
    LP_CU_CHECK(fake_driver_call(CUDA_ERROR_OUT_OF_MEMORY, calls));
    FAIL() << "LP_CU_CHECK did not throw";
  } catch (const StickyCudaError&) {
    FAIL() << "out of memory is not sticky";
  } catch (const Error& e) {  // CudaError is an lp::Error: recorded against the case
    const auto* cuda = dynamic_cast<const CudaError*>(&e);
    ASSERT_NE(cuda, nullptr);
    EXPECT_EQ(cuda->code(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_NE(std::string(e.what()).find("fake_driver_call(CUDA_ERROR_OUT_OF_MEMORY, calls)"), std::string::npos);
  }
}

TEST(CublasCheck, StatusNameAndCallText) {
  try {
    LP_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "LP_CUBLAS_CHECK did not throw";
  } catch (const CudaError& e) {
    EXPECT_EQ(e.api(), CudaApi::cublas);
    EXPECT_EQ(e.name(), "CUBLAS_STATUS_NOT_SUPPORTED");
    EXPECT_NE(std::string(e.what()).find("`CUBLAS_STATUS_NOT_SUPPORTED`"), std::string::npos) << e.what();
  }
}

TEST(NoexceptForms, LogAndNeverThrow) {
  int calls = 0;
  testing::internal::CaptureStderr();
  EXPECT_NO_THROW(LP_CU_CHECK_NOEXCEPT(fake_driver_call(CUDA_ERROR_INVALID_VALUE, calls)));
  EXPECT_NO_THROW(LP_CUBLAS_CHECK_NOEXCEPT(CUBLAS_STATUS_INVALID_VALUE));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(calls, 1);
  EXPECT_NE(err.find("fake_driver_call(CUDA_ERROR_INVALID_VALUE, calls)"), std::string::npos) << err;
  EXPECT_NE(err.find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << err;
}

TEST(Driver, HasCudaDeviceNeverThrows) {
  bool answer = true;
  EXPECT_NO_THROW(answer = has_cuda_device());
  if (answer) {
    EXPECT_NO_THROW(static_cast<void>(driver()));
  }
}

TEST(Driver, MissingLibcudaIsAnEnvironmentError) {
  if (void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(handle);
    GTEST_SKIP() << "libcuda.so.1 is present on this machine; this test is for hosts without the driver";
  }
  EXPECT_FALSE(has_cuda_device());
  try {
    static_cast<void>(init_driver(false));
    FAIL() << "init_driver did not throw without libcuda.so.1";
  } catch (const EnvironmentError& e) {
    EXPECT_EQ(e.code(), ExitCode::environment);
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(static_cast<void>(driver()), Error);
  EXPECT_EQ(driver_if_loaded(), nullptr);
  // The probe says why: no driver library, a genuine absence, named with dlopen's reason.
  const DeviceProbe probe = probe_cuda_device();
  EXPECT_EQ(probe.absence, DeviceProbe::Absence::no_driver_library);
  EXPECT_TRUE(probe.genuinely_absent());
  EXPECT_NE(probe.why.find("libcuda.so.1"), std::string::npos) << probe.why;
}

TEST(Driver, TheProbeAgreesWithHasCudaDeviceAndSaysWhyNot) {
  const DeviceProbe probe = probe_cuda_device();
  EXPECT_EQ(probe.present(), has_cuda_device());
  EXPECT_EQ(probe.why.empty(), probe.present()) << probe.why;
}

/// A GPU test skips only where there is genuinely no GPU, says why, and fails with
/// LP_REQUIRE_GPU=1; a driver that fails to initialise fails it, required or not.
TEST(GpuTests, SkipOnlyAGenuineAbsenceAndSayWhy) {
  using test_support::GpuDecision;
  using test_support::gpu_decision;
  const std::string no_device = "cuInit(0) failed with CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)";
  const DeviceProbe absent{DeviceProbe::Absence::no_device, no_device};
  EXPECT_EQ(gpu_decision(absent, false).act, GpuDecision::Act::skip);
  EXPECT_EQ(gpu_decision(absent, false).message, "skipped: no GPU (" + no_device + ")");
  EXPECT_EQ(gpu_decision(absent, true).act, GpuDecision::Act::fail);
  EXPECT_EQ(gpu_decision(absent, true).message, "LP_REQUIRE_GPU=1 and no GPU (" + no_device + ")");
  const DeviceProbe no_library{DeviceProbe::Absence::no_driver_library, "cannot load libcuda.so.1"};
  EXPECT_EQ(gpu_decision(no_library, false).act, GpuDecision::Act::skip);
  const std::string mismatch = "cuInit(0) failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (system has unsupported "
                               "display driver / cuda driver combination)";
  const DeviceProbe broken{DeviceProbe::Absence::init_error, mismatch};
  for (const bool required : {false, true}) {
    EXPECT_EQ(gpu_decision(broken, required).act, GpuDecision::Act::fail);
    EXPECT_EQ(gpu_decision(broken, required).message, "the CUDA driver failed to initialise: " + mismatch);
  }
  EXPECT_EQ(gpu_decision(DeviceProbe{}, true).act, GpuDecision::Act::run);
}

TEST(Cublas, VersionsNeedNoGpu) {
  EXPECT_EQ(cublas_header_version().rfind(std::to_string(CUBLAS_VER_MAJOR) + ".", 0), 0u);
  const std::string loaded = cublas_library_version();
  EXPECT_EQ(loaded.rfind(std::to_string(CUBLAS_VER_MAJOR) + ".", 0), 0u) << loaded;
  ASSERT_NE(cublas_api_if_loaded(), nullptr);
  EXPECT_EQ(cublas_api_if_loaded(), &cublas_api());
}

TEST(Cublas, NotLoadedUntilFirstUsed) {
  // "threadsafe" runs the statement in a fresh execution of this test binary, so no
  // earlier test has loaded cuBLAS there: only the binary's own start-up could have.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto mapped = [] {
          std::ifstream maps("/proc/self/maps");
          const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
          return text.find("libcublas") != std::string::npos;
        };
        const bool before = cublas_api_if_loaded() == nullptr && !mapped();
        (void)cublas_library_version();
        std::exit(before && cublas_api_if_loaded() != nullptr && mapped() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace lp
