#include "verify/compare.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "model/symptom.hpp"
#include "util/error.hpp"
#include "verify/compare_internal.hpp"
#include "verify/device_launchers.hpp"
#include "verify/poison.hpp"

namespace lp {

using compare_detail::Coord;
using compare_detail::ElementOutcome;
using compare_detail::KernelLayout;
using compare_detail::LocalMetrics;
using compare_detail::MetricsBlock;

CompareLayout CompareLayout::expand_output(std::int64_t num_tokens, const std::vector<std::int64_t>& slice_hidden) {
  CompareLayout l;
  l.m_slice_major = false;
  l.m_num_tokens = num_tokens;
  l.m_width = slice_hidden;
  l.m_offset.assign(slice_hidden.size(), 0);
  std::exclusive_scan(slice_hidden.begin(), slice_hidden.end(), l.m_offset.begin(), std::int64_t{0});
  l.m_row_stride = std::accumulate(slice_hidden.begin(), slice_hidden.end(), std::int64_t{0});
  return l;
}

CompareLayout CompareLayout::shrink_output(std::int64_t num_slices, std::int64_t num_tokens, std::int64_t rank) {
  CompareLayout l;
  l.m_slice_major = true;
  l.m_num_tokens = num_tokens;
  l.m_width.assign(static_cast<std::size_t>(std::max<std::int64_t>(num_slices, 0)), rank);
  l.m_offset.assign(l.m_width.size(), 0);
  l.m_row_stride = rank;
  return l;
}

std::int64_t CompareLayout::total_elements() const noexcept {
  return m_slice_major ? num_slices() * m_num_tokens * m_row_stride : m_num_tokens * m_row_stride;
}

std::int64_t CompareLayout::total_tiles(const TileShape& tile) const {
  const KernelLayout k = compare_detail::kernel_layout(*this, tile);
  return k.num_slices == 0 ? 0 : k.tile_base[k.num_slices - 1] + ((m_num_tokens + tile.block_m - 1) / tile.block_m) *
                                                                    k.tiles_n[k.num_slices - 1];
}

double CompareSpec::rel_floor() const noexcept {
  if (rtol > 0.0) {
    return atol / rtol;
  }
  // Smallest normal of the dtype: below it the dtype has no relative precision.
  return dtype == DType::f16 ? 6.103515625e-05 : static_cast<double>(std::numeric_limits<float>::min());
}

namespace compare_detail {

KernelLayout kernel_layout(const CompareLayout& layout, const TileShape& tile) {
  if (tile.block_m <= 0 || tile.block_n <= 0) {
    throw Error(fmt::format("tile shape {}x{} is not positive", tile.block_m, tile.block_n));
  }
  if (layout.num_slices() < 1 || layout.num_slices() > k_max_slices) {
    throw Error(fmt::format("{} slices; the comparison handles 1 to {}", layout.num_slices(), k_max_slices));
  }
  KernelLayout k;
  k.kind = layout.slice_major() ? 1 : 0;
  k.num_slices = static_cast<int>(layout.num_slices());
  k.num_tokens = layout.num_tokens();
  k.row_stride = layout.row_stride();
  k.slice_stride = layout.slice_major() ? layout.num_tokens() * layout.row_stride() : 0;
  k.block_m = tile.block_m;
  k.block_n = tile.block_n;
  const std::int64_t tiles_m = (layout.num_tokens() + tile.block_m - 1) / tile.block_m;
  std::int64_t base = 0;
  for (int s = 0; s < k.num_slices; ++s) {
    k.offset[s] = layout.slice_offset()[static_cast<std::size_t>(s)];
    k.width[s] = layout.slice_width()[static_cast<std::size_t>(s)];
    k.tiles_n[s] = (k.width[s] + tile.block_n - 1) / tile.block_n;
    k.tile_base[s] = base;
    base += tiles_m * k.tiles_n[s];
  }
  return k;
}

ElementRule element_rule(const CompareSpec& spec) {
  ElementRule r;
  r.dtype = spec.dtype;
  r.atol = spec.atol;
  r.rtol = spec.rtol;
  r.rel_floor = spec.rel_floor();
  r.poison_measurable = spec.unwritten_measurable;
  r.poison = poison_bits(spec.dtype);
  return r;
}

void check_size(const CompareLayout& layout, DType dtype, std::size_t bytes, const char* what) {
  const auto wanted = static_cast<std::size_t>(layout.total_elements()) * dtype_size(dtype);
  if (bytes != wanted) {
    throw Error(fmt::format("comparison: {} has {} bytes, the layout needs {} ({} {} elements)", what, bytes, wanted,
                            layout.total_elements(), dtype_name(dtype)));
  }
}

MetricsBlock empty_block() {
  MetricsBlock b{};
  b.first_bad = k_no_index;
  return b;
}

CompareMetrics to_metrics(const CompareLayout& layout, const CompareSpec& spec, const MetricsBlock& block) {
  CompareMetrics m;
  m.elements = block.elements;
  m.untouched_elements = block.untouched_elements;
  m.nan = block.nan;
  m.inf = block.inf;
  m.huge = block.huge;
  if (spec.unwritten_measurable) {
    m.unwritten = block.unwritten;
  }
  m.untouched_rows_written = block.untouched_rows_written;
  m.mismatches = block.mismatches;
  m.reference_nonfinite = block.reference_nonfinite;
  m.max_abs_dev = double_from_bits(block.max_abs_dev_bits);
  m.max_rel_dev = double_from_bits(block.max_rel_dev_bits);
  m.worst_dev_over_tolerance = double_from_bits(block.max_tol_ratio_bits);
  m.failing_tiles = block.failing_tiles;
  m.total_tiles = static_cast<std::uint64_t>(layout.total_tiles(spec.tile));
  m.atol = spec.atol;
  m.rtol = spec.rtol;
  m.rel_floor = spec.rel_floor();
  if (block.first_bad != k_no_index) {
    const Coord c = decode(kernel_layout(layout, spec.tile), block.first_bad);
    BadElement bad;
    bad.index = block.first_bad;
    bad.slice = c.slice;
    bad.token = c.token;
    bad.column = c.column;
    bad.expected_bits = block.first_expected_bits;
    bad.actual_bits = block.first_actual_bits;
    bad.expected = static_cast<double>(bits_to_float(spec.dtype, block.first_expected_bits));
    bad.actual = static_cast<double>(bits_to_float(spec.dtype, block.first_actual_bits));
    bad.untouched_row = block.first_untouched_row != 0;
    bad.dtype = spec.dtype;
    m.first_bad = bad;
  }
  return m;
}

}  // namespace compare_detail

CompareMetrics compare_on_host(const CompareLayout& layout, const CompareSpec& spec, std::span<const std::byte> actual,
                               std::span<const std::byte> expected, std::span<const std::int32_t> lora_of) {
  compare_detail::check_size(layout, spec.dtype, actual.size(), "the actual output");
  compare_detail::check_size(layout, spec.dtype, expected.size(), "the expected output");
  if (static_cast<std::int64_t>(lora_of.size()) != layout.num_tokens()) {
    throw Error(fmt::format("comparison: lora_of has {} entries for {} tokens", lora_of.size(), layout.num_tokens()));
  }
  const KernelLayout k = compare_detail::kernel_layout(layout, spec.tile);
  const compare_detail::ElementRule rule = compare_detail::element_rule(spec);
  std::vector<std::uint8_t> tile_failed(static_cast<std::size_t>(layout.total_tiles(spec.tile)), 0);

  MetricsBlock block = compare_detail::empty_block();
  LocalMetrics local;
  const auto n = static_cast<std::uint64_t>(layout.total_elements());
  for (std::uint64_t i = 0; i < n; ++i) {
    const Coord c = compare_detail::decode(k, i);
    const bool live = lora_of[static_cast<std::size_t>(c.token)] >= 0;
    const std::uint32_t a = load_bits(spec.dtype, actual.data(), i);
    const std::uint32_t e = load_bits(spec.dtype, expected.data(), i);
    const ElementOutcome o = compare_detail::compare_element(rule, a, e, live);
    local.add(o, live);
    if (o.bad) {
      if (block.first_bad == compare_detail::k_no_index) {
        block.first_bad = i;
        block.first_expected_bits = e;
        block.first_actual_bits = a;
        block.first_untouched_row = live ? 0u : 1u;
      }
      std::uint8_t& flag = tile_failed[static_cast<std::size_t>(compare_detail::tile_index(k, c))];
      block.failing_tiles += flag == 0 ? 1u : 0u;
      flag = 1;
    }
  }
  block.elements = local.elements;
  block.untouched_elements = local.untouched_elements;
  block.nan = local.nan;
  block.inf = local.inf;
  block.huge = local.huge;
  block.unwritten = local.unwritten;
  block.untouched_rows_written = local.untouched_rows_written;
  block.mismatches = local.mismatches;
  block.reference_nonfinite = local.reference_nonfinite;
  block.max_abs_dev_bits = compare_detail::double_bits(local.max_abs_dev);
  block.max_rel_dev_bits = compare_detail::double_bits(local.max_rel_dev);
  block.max_tol_ratio_bits = compare_detail::double_bits(local.worst_dev_over_tolerance);
  return compare_detail::to_metrics(layout, spec, block);
}

namespace {

/// What the last 8 bytes of a readback hold once it landed: this word twice ("lorp"),
/// so one 32-bit fill writes it; cleared on the host before each readback is queued.
constexpr std::uint32_t k_readback_stamp_word = 0x70726f6cU;
constexpr std::uint64_t k_readback_stamp = (std::uint64_t{k_readback_stamp_word} << 32) | k_readback_stamp_word;

constexpr std::size_t round_up_16(std::size_t n) { return (n + 15) / 16 * 16; }

}  // namespace

// One allocation: the metrics blocks and the stamp (what the readback copies), each
// comparison's tile flags, the kernel's per-block shares. Two fills make it ready:
// zeros (each block's blocks_done, every flag) and the stamp. The kernel's last block
// writes every field of its MetricsBlock, so no block needs empty_block() first.
QueuedComparisons::QueuedComparisons(const CompareLayout& layout, const CompareSpec& spec, std::size_t capacity,
                                     const Stream& stream)
    : m_layout(layout), m_spec(spec), m_stream(stream), m_capacity(capacity) {
  (void)compare_detail::kernel_layout(layout, spec.tile);  // a bad tile shape fails here, before any work
  m_tiles = static_cast<std::size_t>(layout.total_tiles(spec.tile));
  m_tiles_offset = round_up_16(readback_bytes());
  m_shares_offset = round_up_16(m_tiles_offset + m_tiles * capacity * sizeof(unsigned));
  m_scratch = DeviceBuffer(
      m_shares_offset + static_cast<std::size_t>(device_launch::k_compare_max_blocks) * sizeof(compare_detail::CompareShare),
      stream);
  m_scratch.fill_u32(0, 0, m_shares_offset, stream);
  m_scratch.fill_u32(k_readback_stamp_word, capacity * sizeof(MetricsBlock), sizeof(k_readback_stamp), stream);
}

std::size_t QueuedComparisons::readback_bytes() const noexcept {
  return m_capacity * sizeof(MetricsBlock) + sizeof(k_readback_stamp);
}

void QueuedComparisons::enqueue(const DeviceBuffer& actual, const DeviceBuffer& expected,
                                const DeviceBuffer& lora_of) {
  compare_detail::check_size(m_layout, m_spec.dtype, actual.bytes(), "the actual output");
  compare_detail::check_size(m_layout, m_spec.dtype, expected.bytes(), "the expected output");
  if (lora_of.bytes() != static_cast<std::size_t>(m_layout.num_tokens()) * sizeof(std::int32_t)) {
    throw Error("comparison: the device lora_of does not have one int32 per token");
  }
  if (m_count == m_capacity) {
    throw Error(fmt::format("comparison: {} comparisons queued, room for {}", m_count + 1, m_capacity));
  }
  const KernelLayout k = compare_detail::kernel_layout(m_layout, m_spec.tile);
  const compare_detail::ElementRule rule = compare_detail::element_rule(m_spec);
  auto* const base = static_cast<unsigned char*>(m_scratch.raw());
  device_launch::compare(k, rule, actual.raw(), expected.raw(), static_cast<const std::int32_t*>(lora_of.raw()),
                         reinterpret_cast<unsigned*>(base + m_tiles_offset) + m_count * m_tiles,
                         reinterpret_cast<compare_detail::CompareShare*>(base + m_shares_offset),
                         reinterpret_cast<MetricsBlock*>(base) + m_count,
                         static_cast<unsigned long long>(m_layout.total_elements()), m_stream.get());
  ++m_count;
}

std::vector<CompareMetrics> QueuedComparisons::collect() {
  std::vector<MetricsBlock> blocks(m_count);
  if (m_count > 0) {
    m_scratch.copy_to_host(blocks.data(), m_count * sizeof(MetricsBlock), m_stream);
  }
  m_stream.synchronize();
  std::vector<CompareMetrics> out;
  out.reserve(m_count);
  for (const MetricsBlock& block : blocks) {
    out.push_back(compare_detail::to_metrics(m_layout, m_spec, block));
  }
  return out;
}

void QueuedComparisons::enqueue_readback(PinnedHostBuffer& into) {
  if (into.bytes() < readback_bytes()) {
    throw Error(fmt::format("comparison readback: {} bytes of page-locked memory for {}", into.bytes(),
                            readback_bytes()));
  }
  std::memset(into.data() + m_capacity * sizeof(MetricsBlock), 0, sizeof(k_readback_stamp));
  m_scratch.copy_to_host(into.data(), readback_bytes(), m_stream);
}

bool QueuedComparisons::arrived(const PinnedHostBuffer& from) const {
  if (from.bytes() < readback_bytes()) {
    return false;
  }
  // The device's copy writes the page-locked memory behind the compiler's back.
  std::uint64_t stamp = 0;
  std::atomic_thread_fence(std::memory_order_acquire);
  std::memcpy(&stamp, from.data() + m_capacity * sizeof(MetricsBlock), sizeof(stamp));
  return stamp == k_readback_stamp;
}

std::vector<CompareMetrics> QueuedComparisons::metrics_from(const PinnedHostBuffer& from) const {
  if (!arrived(from)) {
    throw Error("comparison readback: the metrics have not arrived (the stream did not reach their copy)");
  }
  std::vector<CompareMetrics> out;
  out.reserve(m_count);
  for (std::size_t i = 0; i < m_count; ++i) {
    MetricsBlock block;
    std::memcpy(&block, from.data() + i * sizeof(MetricsBlock), sizeof(MetricsBlock));
    out.push_back(compare_detail::to_metrics(m_layout, m_spec, block));
  }
  return out;
}

CompareMetrics compare_on_device(const CompareLayout& layout, const CompareSpec& spec, const DeviceBuffer& actual,
                                 const DeviceBuffer& expected, const DeviceBuffer& lora_of, const Stream& stream) {
  QueuedComparisons queue(layout, spec, 1, stream);
  queue.enqueue(actual, expected, lora_of);
  return queue.collect().front();
}

}  // namespace lp
