#include "cuda/device_info.hpp"

#include <cuda.h>

#include <array>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/cublas.hpp"
#include "cuda/driver.hpp"

namespace lp {
namespace {

int attribute(CUdevice device, CUdevice_attribute which) {
  int value = 0;
  LP_CU_CHECK(driver().cuDeviceGetAttribute(&value, which, device));
  return value;
}

// nvidia-smi's spelling: GPU-8-4-4-4-12 lowercase hex digits.
std::string format_uuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

}  // namespace

int device_count() {
  int count = 0;
  LP_CU_CHECK(driver().cuDeviceGetCount(&count));
  return count;
}

DeviceInfo query_device_info(int ordinal) {
  const DriverApi& drv = driver();
  DeviceInfo info;
  info.ordinal = ordinal;
  CUdevice device = 0;
  LP_CU_CHECK(drv.cuDeviceGet(&device, ordinal));

  std::array<char, 256> name{};
  LP_CU_CHECK(drv.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device));
  info.name = name.data();
  CUuuid uuid{};
  LP_CU_CHECK(drv.cuDeviceGetUuid(&uuid, device));
  info.uuid = format_uuid(uuid);
  std::array<char, 64> bus{};
  LP_CU_CHECK(drv.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device));
  info.pci_bus_id = bus.data();

  info.cc_major = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  info.cc_minor = attribute(device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.sm_count = attribute(device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  info.sm_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
  info.memory_clock_khz = attribute(device, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  info.memory_bus_width_bits = attribute(device, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  info.ecc_enabled = attribute(device, CU_DEVICE_ATTRIBUTE_ECC_ENABLED) != 0;

  std::size_t total = 0;
  LP_CU_CHECK(drv.cuDeviceTotalMem(&total, device));
  info.total_memory_bytes = total;
  std::size_t free_bytes = 0;
  std::size_t total_in_context = 0;
  LP_CU_CHECK(drv.cuMemGetInfo(&free_bytes, &total_in_context));
  info.free_memory_bytes = free_bytes;

  LP_CU_CHECK(drv.cuDriverGetVersion(&info.driver_version));
  info.kernel_driver = kernel_driver_version();
  info.cublas_version = cublas_library_version();
  return info;
}

std::string format_cuda_version(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

std::string kernel_driver_version() noexcept {
  try {
    std::ifstream file("/proc/driver/nvidia/version");
    std::string line;
    if (!std::getline(file, line)) {
      return "";
    }
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Thu ..." (open module:
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159  Release Build ...").
    static const std::regex k_version(R"(Kernel Module(?: for \S+)?\s+([0-9]+(?:\.[0-9]+)+))");
    std::smatch match;
    if (std::regex_search(line, match, k_version)) {
      return match[1].str();
    }
    return "";
  } catch (...) {
    // Reading /proc is best-effort context for the report; any failure means "unknown".
    return "";
  }
}

}  // namespace lp
