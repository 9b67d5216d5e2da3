// The comparison kernel against its host twin on random buffers with planted NaN,
// Inf, poison and writes into rows without LoRA: every metric must agree exactly.

#include <gtest/gtest.h>

#include <ostream>

#include <cstring>
#include <string>

#include "support/print_name.hpp"
#include "gpu_fixture.hpp"
#include "verify/inputs.hpp"
#include "verify/poison.hpp"

namespace lp::test {
namespace {

struct PlantedCase {
  std::string name;
  bool slice_major;  // buf [S, T, R] instead of y [T, H_tot]
  DType dtype;
  std::int64_t tokens;
  std::vector<std::int64_t> widths;  // slice widths (all equal for slice-major)
  bool unwritten_measurable;
  std::uint32_t defects_per_million;  // how often each kind of defect is planted
};

using test_support::PrintTo;  // a case prints as its name

std::uint32_t nan_bits(DType t) { return t == DType::f32 ? 0x7FFFFFFFu : 0x7FFFu; }
std::uint32_t inf_bits(DType t) { return t == DType::f32 ? 0x7F800000u : t == DType::bf16 ? 0x7F80u : 0x7C00u; }

class ComparePlanted : public VerifyGpu, public testing::WithParamInterface<PlantedCase> {};

TEST_P(ComparePlanted, DeviceMetricsEqualTheHostTwin) {
  const PlantedCase& c = GetParam();
  const CompareLayout layout = c.slice_major
                                   ? CompareLayout::shrink_output(static_cast<std::int64_t>(c.widths.size()), c.tokens,
                                                                  c.widths[0])
                                   : CompareLayout::expand_output(c.tokens, c.widths);
  const auto n = static_cast<std::size_t>(layout.total_elements());
  const std::size_t size = dtype_size(c.dtype);
  const std::vector<std::int32_t> lora_of = make_token_mapping(c.tokens, 3, 99);

  // Expected: generated values; rows without LoRA hold the poison like a reference does.
  std::vector<std::byte> expected(n * size);
  std::vector<std::byte> actual(n * size);
  const auto put = [&](std::vector<std::byte>& v, std::size_t i, std::uint32_t bits) {
    std::memcpy(v.data() + i * size, &bits, size);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t token = c.slice_major ? (i / static_cast<std::size_t>(c.widths[0])) % static_cast<std::size_t>(c.tokens)
                                            : i / static_cast<std::size_t>(layout.row_stride());
    const bool live = lora_of[token] >= 0;
    const std::uint32_t e = live ? generated_bits(c.dtype, k_activation_range, 5, 1, i) : poison_bits(c.dtype);
    put(expected, i, e);
    // Actual: mostly equal or a little off; a planted defect every so often.
    const std::uint32_t dice = generated_bits(DType::f32, ValueRange{1.0f, 2.0f}, 6, 2, i) % 1000000u;
    std::uint32_t a = e;
    if (dice < c.defects_per_million) {
      a = nan_bits(c.dtype);
    } else if (dice < 2 * c.defects_per_million) {
      a = inf_bits(c.dtype) | (dice & 1u ? (c.dtype == DType::f32 ? 0x80000000u : 0x8000u) : 0u);
    } else if (dice < 3 * c.defects_per_million) {
      a = poison_bits(c.dtype);
    } else if (dice < 4 * c.defects_per_million) {
      a = generated_bits(c.dtype, k_activation_range, 7, 3, i);  // wrong value (also hits -1 rows)
    } else if (dice < 5 * c.defects_per_million && live) {
      // Equal to a reference that is itself special (the poison, NaN, Inf, huge): the
      // kernel's short way for equal elements must leave these to the full judgement.
      const std::uint32_t huge = c.dtype == DType::f32 ? 0x7A000000u : c.dtype == DType::bf16 ? 0x7A00u : 0x7BFFu;
      const std::uint32_t specials[4] = {poison_bits(c.dtype), nan_bits(c.dtype), inf_bits(c.dtype), huge};
      a = specials[dice % 4u];
      put(expected, i, a);
    } else if (dice < 300000u && live) {
      a = e ^ 1u;  // last-bit noise, well within tolerance
    }
    put(actual, i, a);
  }
  CompareSpec spec;
  spec.dtype = c.dtype;
  spec.atol = 1e-3;
  spec.rtol = 2.0 * unit_roundoff(c.dtype) * 2.0;
  spec.tile = TileShape{16, 64};
  spec.unwritten_measurable = c.unwritten_measurable;

  const CompareMetrics host = compare_on_host(layout, spec, actual, expected, lora_of);
  const DeviceBuffer d_actual = upload(std::span<const std::byte>(actual), stream());
  const DeviceBuffer d_expected = upload(std::span<const std::byte>(expected), stream());
  const DeviceBuffer d_lora_of = upload(std::span<const std::int32_t>(lora_of), stream());
  const CompareMetrics device = compare_on_device(layout, spec, d_actual, d_expected, d_lora_of, stream());
  SCOPED_TRACE("host:   " + host.summary());
  SCOPED_TRACE("device: " + device.summary());
  expect_same_metrics(device, host);
  {
    // The same through the page-locked readback a worker waits for with an event.
    QueuedComparisons queue(layout, spec, 2, stream());
    queue.enqueue(d_actual, d_expected, d_lora_of);
    queue.enqueue(d_actual, d_expected, d_lora_of);
    PinnedHostBuffer readback(queue.readback_bytes());
    std::memset(readback.data(), 0xA5, readback.bytes());
    queue.enqueue_readback(readback);
    stream().synchronize();
    ASSERT_TRUE(queue.arrived(readback));
    const std::vector<CompareMetrics> both = queue.metrics_from(readback);
    ASSERT_EQ(both.size(), 2U);
    expect_same_metrics(both[0], host);
    expect_same_metrics(both[1], host);
  }
  if (c.defects_per_million > 0) {
    EXPECT_GT(host.nan, 0u);
    EXPECT_GT(host.inf, 0u);
    EXPECT_GT(host.untouched_rows_written, 0u);
    EXPECT_FALSE(host.passed());
  } else {
    EXPECT_TRUE(host.passed());
    EXPECT_GT(host.max_abs_dev, 0.0) << "the last-bit noise must show";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ComparePlanted,
    testing::Values(PlantedCase{"y_bf16_three_slices", false, DType::bf16, 300, {128, 64, 96}, true, 200},
                    PlantedCase{"y_fp16_no_poison", false, DType::f16, 257, {256}, false, 500},
                    PlantedCase{"buf_fp32", true, DType::f32, 300, {48, 48}, true, 300},
                    PlantedCase{"y_bf16_clean", false, DType::bf16, 128, {512}, true, 0},
                    // Rows of 58 elements (116 bytes): no 16-byte loads, one element at a time.
                    // Small outputs plant more often, so that every kind of defect occurs.
                    PlantedCase{"y_bf16_odd_width", false, DType::bf16, 300, {37, 21}, true, 300},
                    PlantedCase{"buf_fp32_odd_rank", true, DType::f32, 200, {7, 7, 7}, true, 3000},
                    // 4M elements: more than one pass of the grid-stride loop.
                    PlantedCase{"y_bf16_large", false, DType::bf16, 4096, {1024}, true, 2}),
    [](const testing::TestParamInfo<PlantedCase>& param_info) { return param_info.param.name; });

TEST_F(VerifyGpu, CompareRejectsMismatchedSizes) {
  const CompareLayout layout = CompareLayout::expand_output(4, {8});
  const DeviceBuffer small(16);
  const DeviceBuffer right(64);
  const std::vector<std::int32_t> lora_of = {0, 0, 0, 0};
  const DeviceBuffer d_lora_of = upload(std::span<const std::int32_t>(lora_of), stream());
  CompareSpec spec;
  spec.dtype = DType::bf16;
  EXPECT_THROW(static_cast<void>(compare_on_device(layout, spec, small, right, d_lora_of, stream())), Error);
  const DeviceBuffer short_lora_of(8);  // 2 tokens' worth for a 4-token layout
  EXPECT_THROW(static_cast<void>(compare_on_device(layout, spec, right, right, short_lora_of, stream())), Error);
}

TEST_F(VerifyGpu, AReadbackThatDidNotLandIsNeverRead) {
  const CompareLayout layout = CompareLayout::expand_output(4, {8});
  CompareSpec spec;
  spec.dtype = DType::bf16;
  QueuedComparisons queue(layout, spec, 1, stream());
  PinnedHostBuffer small(queue.readback_bytes() - 1);
  EXPECT_THROW(queue.enqueue_readback(small), Error);
  PinnedHostBuffer never(queue.readback_bytes());
  std::memset(never.data(), 0, never.bytes());  // no copy was queued into it
  stream().synchronize();
  EXPECT_FALSE(queue.arrived(never));
  EXPECT_THROW(static_cast<void>(queue.metrics_from(never)), Error);
}

}  // namespace
}  // namespace lp::test
