#pragma once
// The device half of the lora_linear family (families/device.hpp).

#include "families/device.hpp"

namespace lp {

[[nodiscard]] const DeviceFamily& lora_linear_device() noexcept;

}  // namespace lp
