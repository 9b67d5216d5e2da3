#pragma once
// The CUDA driver API, loaded at run time. The CPU CI machine has no libcuda.so.1,
// and `loraprobe inspect` / `version` and every test binary must still start
// there, so nothing links libcuda: init_driver() dlopens libcuda.so.1 and resolves
// the entry points below by the names cuda.h maps them to (cuMemAlloc ->
// cuMemAlloc_v2), so the function types and symbols always agree with the header
// we compiled against.
//
// Use: `const DriverApi& drv = driver(); LP_CU_CHECK(drv.cuMemAlloc(&ptr, bytes));`

#include <cuda.h>

#include <string>

namespace lp {

/// The real file behind a dlopen handle (libcuda.so.1 is normally a symlink to
/// libcuda.so.<driver version>), for the report; `fallback` when unknown.
std::string loaded_library_path(void* handle, const std::string& fallback);

// Every driver entry point loraprobe uses. Member names are the C API's names
// (after cuda.h's versioning macros), so `drv.cuLinkCreate(...)` reads like the
// documentation and greps like it.
#define LP_DRIVER_FUNCTIONS(X)   \
  X(cuInit)                      \
  X(cuDriverGetVersion)          \
  X(cuGetErrorName)              \
  X(cuGetErrorString)            \
  X(cuDeviceGetCount)            \
  X(cuDeviceGet)                 \
  X(cuDeviceGetName)             \
  X(cuDeviceGetUuid)             \
  X(cuDeviceGetAttribute)        \
  X(cuDeviceGetPCIBusId)         \
  X(cuDeviceTotalMem)            \
  X(cuDevicePrimaryCtxRetain)    \
  X(cuDevicePrimaryCtxRelease)   \
  X(cuCtxSetCurrent)             \
  X(cuCtxGetCurrent)             \
  X(cuCtxGetDevice)              \
  X(cuCtxSynchronize)            \
  X(cuModuleGetLoadingMode)      \
  X(cuModuleLoadData)            \
  X(cuModuleUnload)              \
  X(cuModuleGetFunction)         \
  X(cuLibraryLoadData)           \
  X(cuLibraryGetKernel)          \
  X(cuFuncGetAttribute)          \
  X(cuFuncSetAttribute)          \
  X(cuLaunchKernel)              \
  X(cuLaunchKernelEx)            \
  X(cuLinkCreate)                \
  X(cuLinkAddData)               \
  X(cuLinkComplete)              \
  X(cuLinkDestroy)               \
  X(cuMemAlloc)                  \
  X(cuMemFree)                   \
  X(cuMemAllocAsync)             \
  X(cuMemFreeAsync)              \
  X(cuDeviceGetDefaultMemPool)   \
  X(cuMemPoolSetAttribute)       \
  X(cuMemPoolTrimTo)             \
  X(cuMemGetInfo)                \
  X(cuMemAllocHost)              \
  X(cuMemFreeHost)               \
  X(cuMemcpyHtoDAsync)           \
  X(cuMemcpyDtoHAsync)           \
  X(cuMemcpyDtoDAsync)           \
  X(cuMemsetD8Async)             \
  X(cuMemsetD16Async)            \
  X(cuMemsetD32Async)            \
  X(cuStreamCreate)              \
  X(cuStreamDestroy)             \
  X(cuStreamSynchronize)         \
  X(cuEventCreate)               \
  X(cuEventDestroy)              \
  X(cuEventRecord)               \
  X(cuEventSynchronize)          \
  X(cuEventElapsedTime)

/// Function pointers into libcuda.so.1, all resolved (none null) once loaded.
struct DriverApi {
#define LP_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  LP_DRIVER_FUNCTIONS(LP_DRIVER_MEMBER)
#undef LP_DRIVER_MEMBER
};

/// What init_driver() did, for the report's environment block.
struct DriverStatus {
  std::string library;              ///< the loaded file, e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159"
  int driver_version = 0;           ///< cuDriverGetVersion: 13000 for CUDA 13.0
  bool jit_cache_allowed = false;   ///< the caller's choice
  std::string cache_disable_env;    ///< CUDA_CACHE_DISABLE as cuInit saw it ("" when unset)
  std::string module_loading_env;   ///< CUDA_MODULE_LOADING as cuInit saw it ("" when unset)
  std::string module_loading_mode;  ///< cuModuleGetLoadingMode: "lazy" or "eager"
  int device_count = 0;             ///< cuDeviceGetCount
};

/// Loads libcuda.so.1 and calls cuInit(0), once per process. Unless allow_jit_cache,
/// sets CUDA_CACHE_DISABLE=1 first so the driver cannot hand back a PTX JIT result
/// compiled by an earlier (possibly different) ptxas. Call it before anything else
/// touches CUDA (the runtime and cuBLAS read the same environment when they start).
/// Later calls return the first result; a later call asking for a different cache
/// policy throws lp::Error, since the driver only reads it once.
/// Throws lp::EnvironmentError when the library cannot be loaded, an entry point is
/// missing (driver older than the CUDA 13 headers) or cuInit fails (no device,
/// driver/kernel module mismatch); the same error is thrown again by later calls.
const DriverStatus& init_driver(bool allow_jit_cache);

/// Whether a CUDA device can be used here, and if not, why.
struct DeviceProbe {
  enum class Absence {
    none,               ///< a device is there
    no_driver_library,  ///< libcuda.so.1 cannot be loaded: no driver installed
    no_device,          ///< the driver works and sees no device (CUDA_ERROR_NO_DEVICE, or none counted)
    init_error,         ///< the driver is there and failed: a missing entry point, cuInit's other errors
  };
  Absence absence = Absence::none;
  std::string why;  ///< empty when a device is there; else the reason, with the CUDA error's name and text

  [[nodiscard]] bool present() const noexcept { return absence == Absence::none; }
  /// No driver or no device: a host without a GPU. An initialisation error is not
  /// one (a broken driver, or a bug to report).
  [[nodiscard]] bool genuinely_absent() const noexcept {
    return absence == Absence::no_driver_library || absence == Absence::no_device;
  }
};

/// Loads and initialises the driver (as has_cuda_device) and says whether it has a
/// device, and if not why. Never throws.
[[nodiscard]] DeviceProbe probe_cuda_device() noexcept;

/// True when the driver loads, initialises and reports at least one device. Never
/// throws: on a host without libcuda.so.1 or without a GPU it returns false (so does
/// a driver that fails to initialise: probe_cuda_device() tells these apart). If
/// init_driver() has not run yet it runs init_driver(false) (JIT cache disabled);
/// call init_driver(true) first to choose otherwise.
[[nodiscard]] bool has_cuda_device() noexcept;

/// The loaded entry points. Throws lp::Error when init_driver() has not succeeded
/// (a programming error: choose the cache policy first).
const DriverApi& driver();

/// The entry points when the driver is loaded, else nullptr. Never throws (for
/// error formatting and destructors).
const DriverApi* driver_if_loaded() noexcept;

}  // namespace lp
