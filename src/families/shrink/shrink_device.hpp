#pragma once
// The device half of the shrink family (families/device.hpp).

#include "families/device.hpp"

namespace lp {

[[nodiscard]] const DeviceFamily& shrink_device() noexcept;

}  // namespace lp
