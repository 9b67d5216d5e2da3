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

void convert_on_device(const void* src, DType from, void* dst, DType to, std::size_t count, const Stream& stream) {
  device_launch::convert(src, from, dst, to, count, stream.get());
}

}  // namespace lp
