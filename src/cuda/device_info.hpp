#pragma once
// What the report's environment block says about the GPU and the CUDA stack.

#include <cuda.h>

#include <cstdint>
#include <string>

namespace lp {

/// One GPU and the CUDA libraries around it.
struct DeviceInfo {
  int ordinal = -1;
  std::string name;                  ///< e.g. "NVIDIA H200"
  std::string uuid;                  ///< "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string pci_bus_id;            ///< "0000:19:00.0"
  int cc_major = 0;                  ///< compute capability, 9.0 on Hopper
  int cc_minor = 0;
  int sm_count = 0;
  int sm_clock_khz = 0;              ///< CU_DEVICE_ATTRIBUTE_CLOCK_RATE (typical, not current)
  int memory_clock_khz = 0;          ///< CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (peak)
  int memory_bus_width_bits = 0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t free_memory_bytes = 0;  ///< at the time of the query
  bool ecc_enabled = false;
  int driver_version = 0;            ///< CUDA version the driver supports, 13000 = 13.0
  std::string kernel_driver;         ///< "580.159" from /proc/driver/nvidia/version, "" when unreadable
  /// The CUDA version loraprobe's own kernels and driver calls were built for (cuda.h's
  /// CUDA_VERSION, 13000 = 13.0): no CUDA runtime is linked. Reports keep the key
  /// runtime_version for it.
  int runtime_version = CUDA_VERSION;
  std::string cublas_version;        ///< libcublas loaded at run time, "13.0.0"
  /// Peak DRAM bandwidth in GB/s from the clocks and bus width (2 transfers per clock).
  [[nodiscard]] double peak_bandwidth_gbps() const noexcept {
    return 2.0 * memory_clock_khz * 1e3 * (memory_bus_width_bits / 8.0) / 1e9;
  }
};

/// Number of CUDA devices; needs init_driver(). Throws lp::Error / lp::CudaError.
[[nodiscard]] int device_count();

/// Everything above for device `ordinal`. Needs init_driver() and the device's
/// context current (free memory is per context). Throws lp::CudaError.
[[nodiscard]] DeviceInfo query_device_info(int ordinal);

/// "13.0" for 13000 (the encoding of cuDriverGetVersion and cudaRuntimeGetVersion).
[[nodiscard]] std::string format_cuda_version(int version);

/// The NVIDIA kernel module version ("580.159") from /proc/driver/nvidia/version,
/// or "" when the file is missing or unparsable. Never throws.
[[nodiscard]] std::string kernel_driver_version() noexcept;

}  // namespace lp
