#pragma once
// The device half of the expand family (families/device.hpp).

#include "families/device.hpp"

namespace lp {

[[nodiscard]] const DeviceFamily& expand_device() noexcept;

}  // namespace lp
