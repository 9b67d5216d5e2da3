#pragma once
// Comparison of a kernel's output with the reference. compare_on_device runs on the
// GPU and copies back only the metrics; compare_on_host is its twin for CPU tests
// and produces identical metrics from the same bits (compare_element.hpp).
//
// Definitions (the report uses these names):
//   live element       an element of a token with a LoRA (lora_of >= 0)
//   untouched element  an element of a token without one; it must keep its pre-launch bits
//   elements           number of live elements compared
//   nan / inf          live elements that are NaN (poison excluded) / +-Inf
//   huge               live elements that are finite with |value| > 1e30: with NaN, the
//                      mark of fp32 bits read as bf16 (model/symptom.hpp)
//   unwritten          live elements still holding the poison; null (nullopt) when the
//                      output could not be poisoned (ADD_INPUTS, SPLIT_K > 1), never a fake 0
//   untouched_rows_written  untouched elements whose bits changed
//   mismatches         live elements failing |a - e| <= atol + rtol*|e|; NaN, Inf and
//                      unwritten elements always fail, so they are included here
//   max_abs_dev        max |a - e| over live elements where both are finite
//   max_rel_dev        max |a - e| / max(|e|, rel_floor), rel_floor = atol/rtol: below that
//                      magnitude the tolerance is mostly atol, and dividing by a tiny |e|
//                      would turn harmless absolute noise into huge "relative" errors
//   worst_dev_over_tolerance  max |a - e| / (atol + rtol*|e|): > 1 is a mismatch; clean
//                      cases are expected at <= 0.5
//   first_bad          the first failing element (mismatch or untouched write) in row-major
//                      memory order of the output tensor
//   failing_tiles      output tiles (block_m tokens x block_n columns of one slice, by token
//                      index and column within the slice) holding at least one failing element
//   reference_nonfinite  live elements whose reference is NaN/Inf: the case itself is invalid
//
// CompareMetrics and BadElement are model/metrics.hpp's; model/metrics_json.hpp is their
// one serialisation (report.schema.json#/$defs/metrics, a closed object).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cuda/memory.hpp"
#include "cuda/stream.hpp"
#include "model/dtype.hpp"
#include "model/metrics.hpp"
#include "model/problem.hpp"

namespace lp {

/// Tile shape used to count failing tiles: block_m tokens x block_n columns.
struct TileShape {
  std::int64_t block_m = 64;
  std::int64_t block_n = 128;
};

/// Where the elements of an output tensor live. Only the two shapes of
/// docs/problem.md exist, so only the two factories construct one.
class CompareLayout {
 public:
  /// y [T, H_tot]: slice s is columns [off_s, off_s + H_s) of every row.
  static CompareLayout expand_output(std::int64_t num_tokens, const std::vector<std::int64_t>& slice_hidden);
  /// buf [S, T, R]: slice s is the s-th [T, R] block.
  static CompareLayout shrink_output(std::int64_t num_slices, std::int64_t num_tokens, std::int64_t rank);

  [[nodiscard]] bool slice_major() const noexcept { return m_slice_major; }
  [[nodiscard]] std::int64_t num_tokens() const noexcept { return m_num_tokens; }
  [[nodiscard]] std::int64_t num_slices() const noexcept { return static_cast<std::int64_t>(m_width.size()); }
  [[nodiscard]] std::int64_t row_stride() const noexcept { return m_row_stride; }
  [[nodiscard]] const std::vector<std::int64_t>& slice_offset() const noexcept { return m_offset; }
  [[nodiscard]] const std::vector<std::int64_t>& slice_width() const noexcept { return m_width; }
  /// Elements in the tensor.
  [[nodiscard]] std::int64_t total_elements() const noexcept;
  /// Tiles of `tile` shape over all slices.
  [[nodiscard]] std::int64_t total_tiles(const TileShape& tile) const;

 private:
  CompareLayout() = default;
  bool m_slice_major = false;
  std::int64_t m_num_tokens = 0;
  std::int64_t m_row_stride = 0;
  std::vector<std::int64_t> m_offset;
  std::vector<std::int64_t> m_width;
};

/// How to judge: the output dtype, the tolerance, the tile shape, and whether the
/// output was poisoned before the launch.
struct CompareSpec {
  DType dtype = DType::bf16;
  double atol = 0.0;
  double rtol = 0.0;
  TileShape tile;
  bool unwritten_measurable = true;
  /// atol / rtol, or the dtype's smallest normal when rtol is 0 (see max_rel_dev).
  [[nodiscard]] double rel_floor() const noexcept;
};

/// Host twin of compare_on_device: `actual` and `expected` hold layout.total_elements()
/// elements of spec.dtype, `lora_of` one entry per token. Throws lp::Error when a
/// size does not match or the tile shape is not positive.
[[nodiscard]] CompareMetrics compare_on_host(const CompareLayout& layout, const CompareSpec& spec,
                                             std::span<const std::byte> actual, std::span<const std::byte> expected,
                                             std::span<const std::int32_t> lora_of);

/// Compares on the device and copies back only the metrics (one small struct).
/// `lora_of` is the int32 device copy. Synchronises `stream`. Throws lp::Error for
/// mismatched sizes, lp::CudaError on failure (StickyCudaError if an earlier
/// kernel on the stream faulted).
[[nodiscard]] CompareMetrics compare_on_device(const CompareLayout& layout, const CompareSpec& spec,
                                               const DeviceBuffer& actual, const DeviceBuffer& expected,
                                               const DeviceBuffer& lora_of, const Stream& stream);

/// compare_on_device for several outputs of one layout (a case's repeats), queued
/// on one stream as each run ends and collected with one wait: every comparison
/// reads its output before the stream's next run overwrites it.
class QueuedComparisons {
 public:
  /// Room for `capacity` comparisons on `stream` (stream-ordered scratch; the
  /// stream must outlive this). Throws lp::Error for a bad tile shape.
  QueuedComparisons(const CompareLayout& layout, const CompareSpec& spec, std::size_t capacity,
                    const Stream& stream);
  /// Queues the comparison of `actual` with `expected`. Throws lp::Error for
  /// mismatched sizes or a full queue, lp::CudaError on failure.
  void enqueue(const DeviceBuffer& actual, const DeviceBuffer& expected, const DeviceBuffer& lora_of);
  /// Waits for the stream; the metrics of each queued comparison, in order.
  /// Throws lp::CudaError (StickyCudaError if a kernel on the stream faulted).
  [[nodiscard]] std::vector<CompareMetrics> collect();

  /// collect() in two halves, for a caller that queues more work behind this one
  /// and waits for an event instead of the stream: queues the copy of every
  /// comparison's metrics, and a stamp after them, into `into` (page-locked, at
  /// least readback_bytes() long), and returns at once. Throws lp::Error when
  /// `into` is too small, lp::CudaError.
  void enqueue_readback(PinnedHostBuffer& into);
  [[nodiscard]] std::size_t readback_bytes() const noexcept;
  /// Whether the copy that enqueue_readback queued has landed in `from` (its stamp
  /// is there): then every comparison before it ended without a fault.
  [[nodiscard]] bool arrived(const PinnedHostBuffer& from) const;
  /// The metrics of each queued comparison, in order, from the copy in `from`.
  /// Throws lp::Error when it has not arrived.
  [[nodiscard]] std::vector<CompareMetrics> metrics_from(const PinnedHostBuffer& from) const;

 private:
  CompareLayout m_layout;
  CompareSpec m_spec;
  const Stream& m_stream;
  std::size_t m_capacity;
  std::size_t m_count = 0;
  std::size_t m_tiles = 0;          ///< tiles of one comparison
  std::size_t m_tiles_offset = 0;   ///< in m_scratch: one flag per tile of each comparison
  std::size_t m_shares_offset = 0;  ///< in m_scratch: the kernel's per-block shares, reused by each
  DeviceBuffer m_scratch;           ///< one MetricsBlock per comparison and the stamp first (compare.cpp)
};

}  // namespace lp
