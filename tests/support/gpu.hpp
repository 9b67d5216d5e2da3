#pragma once
// Test helper: the one way a GPU test asks for a GPU. A host without one (no driver
// library, or a driver that sees no device) skips the test, saying why:
// "skipped: no GPU (<why>)". A driver that is there and fails to initialise fails
// the test with the CUDA error: it is a broken machine or a bug, not an absence.
// With LP_REQUIRE_GPU=1 (scripts/gpu_acceptance.sh sets it) every absence fails too,
// so that a GPU run cannot pass by skipping.

#include <cstdlib>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "cuda/driver.hpp"

namespace lp::test_support {

/// LP_REQUIRE_GPU=1: a GPU test that would skip fails instead.
inline bool gpu_required() {
  const char* v = std::getenv("LP_REQUIRE_GPU");
  return v != nullptr && std::string_view(v) == "1";
}

/// What a GPU test does about `probe`: run, skip or fail, and the line it says.
struct GpuDecision {
  enum class Act { run, skip, fail };
  Act act = Act::run;
  std::string message;
};

inline GpuDecision gpu_decision(const DeviceProbe& probe, bool required) {
  if (probe.present()) {
    return {};
  }
  if (!probe.genuinely_absent()) {
    return {GpuDecision::Act::fail, "the CUDA driver failed to initialise: " + probe.why};
  }
  if (required) {
    return {GpuDecision::Act::fail, "LP_REQUIRE_GPU=1 and no GPU (" + probe.why + ")"};
  }
  return {GpuDecision::Act::skip, "skipped: no GPU (" + probe.why + ")"};
}

}  // namespace lp::test_support

/// The first line of a GPU test's body or SetUp(): skips or fails it as gpu_decision says.
#define LP_REQUIRE_GPU()                                                                                    \
  do {                                                                                                      \
    const ::lp::test_support::GpuDecision lp_gpu =                                                          \
        ::lp::test_support::gpu_decision(::lp::probe_cuda_device(), ::lp::test_support::gpu_required());    \
    if (lp_gpu.act == ::lp::test_support::GpuDecision::Act::skip) {                                         \
      GTEST_SKIP() << lp_gpu.message;                                                                       \
    }                                                                                                       \
    if (lp_gpu.act == ::lp::test_support::GpuDecision::Act::fail) {                                         \
      GTEST_FAIL() << lp_gpu.message;                                                                       \
    }                                                                                                       \
  } while (false)
