#pragma once
// The device half of the fused_moe family (families/device.hpp).

#include "families/device.hpp"

namespace lp {

[[nodiscard]] const DeviceFamily& fused_moe_device() noexcept;

}  // namespace lp
