#pragma once
// The FP8 families' device halves (families/device.hpp).

#include "families/device.hpp"

namespace lp {

[[nodiscard]] const DeviceFamily& shrink_fp8_device() noexcept;
[[nodiscard]] const DeviceFamily& expand_fp8_device() noexcept;

}  // namespace lp
