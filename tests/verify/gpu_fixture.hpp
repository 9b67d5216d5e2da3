#pragma once
// Test helper for the GPU tests of src/verify: a context, a stream and a cuBLAS
// handle on device 0, or "skipped: no GPU".

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "support/gpu.hpp"
#include "cuda/context.hpp"
#include "cuda/cublas.hpp"
#include "cuda/driver.hpp"
#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "util/error.hpp"
#include "verify/compare.hpp"

namespace lp::test {

class VerifyGpu : public testing::Test {
 protected:
  void SetUp() override {
    LP_REQUIRE_GPU();
    m_context.emplace(0);
    m_stream.emplace();
    m_cublas.emplace(*m_stream);
  }
  const Stream& stream() const { return *m_stream; }
  const CublasHandle& cublas() const { return *m_cublas; }

  /// The whole buffer as bytes, on the host.
  std::vector<std::byte> bytes(const DeviceBuffer& buffer) const { return download<std::byte>(buffer, stream()); }

 private:
  // Destroyed in reverse: handle, stream, then the context they live in.
  std::optional<PrimaryContext> m_context;
  std::optional<Stream> m_stream;
  std::optional<CublasHandle> m_cublas;
};

/// Every field of two metrics equal (doubles bit for bit: the twin must match exactly).
inline void expect_same_metrics(const CompareMetrics& device, const CompareMetrics& host) {
  EXPECT_EQ(device.elements, host.elements);
  EXPECT_EQ(device.untouched_elements, host.untouched_elements);
  EXPECT_EQ(device.nan, host.nan);
  EXPECT_EQ(device.inf, host.inf);
  EXPECT_EQ(device.unwritten, host.unwritten);
  EXPECT_EQ(device.untouched_rows_written, host.untouched_rows_written);
  EXPECT_EQ(device.mismatches, host.mismatches);
  EXPECT_EQ(device.reference_nonfinite, host.reference_nonfinite);
  EXPECT_EQ(device.max_abs_dev, host.max_abs_dev);
  EXPECT_EQ(device.max_rel_dev, host.max_rel_dev);
  EXPECT_EQ(device.worst_dev_over_tolerance, host.worst_dev_over_tolerance);
  EXPECT_EQ(device.failing_tiles, host.failing_tiles);
  EXPECT_EQ(device.total_tiles, host.total_tiles);
  ASSERT_EQ(device.first_bad.has_value(), host.first_bad.has_value());
  if (device.first_bad) {
    EXPECT_EQ(device.first_bad->describe(), host.first_bad->describe());
    EXPECT_EQ(device.first_bad->index, host.first_bad->index);
  }
  EXPECT_EQ(device.summary(), host.summary());
}

}  // namespace lp::test
