#include "verify/inputs.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/error.hpp"
#include "verify/device_launchers.hpp"

namespace lp {

void validate_range(DType t, ValueRange range) {
  const float lo = round_to(t, range.lo);
  const float hi = round_to(t, range.hi);
  if (!(lo > 0.0f) || !(lo <= hi) || !std::isfinite(hi)) {
    throw Error(fmt::format("generated magnitudes [{}, {}] round to [{}, {}] in {}: they must stay positive "
                            "and finite so that no generated element is zero or infinite",
                            range.lo, range.hi, lo, hi, dtype_name(t)));
  }
}

void fill_generated(const DeviceBuffer& dst, DType t, ValueRange range, std::uint64_t seed, std::uint32_t tensor,
                    const Stream& stream) {
  validate_range(t, range);
  if (dst.bytes() % dtype_size(t) != 0) {
    throw Error(fmt::format("fill_generated: {} bytes is not a whole number of {} elements", dst.bytes(),
                            dtype_name(t)));
  }
  device_launch::fill_generated(dst.raw(), t, dst.bytes() / dtype_size(t), range, seed, tensor, stream.get());
}

void fill_scales(const DeviceBuffer& scales, const ScaleGrid& grid, std::uint64_t seed, std::uint32_t tensor,
                 const Stream& stream) {
  const auto count = static_cast<std::size_t>(grid.scales());
  if (scales.bytes() < count * sizeof(float) || scales.bytes() % sizeof(float) != 0) {
    throw Error(fmt::format("fill_scales: {} bytes for {} fp32 scales", scales.bytes(), count));
  }
  device_launch::fill_scales(static_cast<float*>(scales.raw()), scales.bytes() / sizeof(float), seed, tensor,
                             stream.get());
}

void dequantize_on_device(const DeviceBuffer& q, const DeviceBuffer& scales, const ScaleGrid& grid,
                          const DeviceBuffer& dst, DType t, const Stream& stream) {
  const auto count = static_cast<std::size_t>(grid.batch * grid.rows * grid.cols);
  if (grid.group_rows < 1 || grid.group_cols < 1 || q.bytes() != count * dtype_size(DType::e4m3) ||
      dst.bytes() != count * dtype_size(t) ||
      scales.bytes() < static_cast<std::size_t>(grid.scales()) * sizeof(float)) {
    throw Error(fmt::format("dequantize: buffers of {}, {} and {} bytes do not fit a [{}, {}, {}] operand in "
                            "{}x{} groups",
                            q.bytes(), scales.bytes(), dst.bytes(), grid.batch, grid.rows, grid.cols,
                            grid.group_rows, grid.group_cols));
  }
  device_launch::dequantize(q.raw(), static_cast<const float*>(scales.raw()), grid, dst.raw(), t, stream.get());
}

void convert_on_device(const void* src, DType from, void* dst, DType to, std::size_t count, const Stream& stream) {
  device_launch::convert(src, from, dst, to, count, stream.get());
}

}  // namespace lp
