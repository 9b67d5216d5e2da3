#include "cuda/driver.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

// Two-level stringification, so LP_DRIVER_SYMBOL(cuMemAlloc) is "cuMemAlloc_v2":
// the argument is macro-expanded before # applies.
#define LP_DRIVER_SYMBOL_IMPL(name) #name
#define LP_DRIVER_SYMBOL(name) LP_DRIVER_SYMBOL_IMPL(name)

struct DriverState {
  std::mutex mutex;
  bool attempted = false;
  DriverApi api;
  std::optional<DriverStatus> status;  // set on success
  std::string failure;                 // set on failure; rethrown by later calls
  DeviceProbe::Absence failure_kind = DeviceProbe::Absence::init_error;  // what `failure` means
  bool allow_jit_cache = false;
  // &api once everything succeeded. Atomic and read without the mutex, because error
  // formatting (cu_result_name) asks for it while init_driver() holds the mutex.
  std::atomic<const DriverApi*> loaded{nullptr};
};

DriverState& state() {
  static DriverState s;
  return s;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// Everything that can fail, in order; throws EnvironmentError with the reason.
DriverStatus load_and_init(DriverState& s, bool allow_jit_cache) {
  if (!allow_jit_cache) {
    // Read by cuInit; overriding a user's CUDA_CACHE_DISABLE=0 is the point.
    setenv("CUDA_CACHE_DISABLE", "1", 1);
  }
  // RTLD_NODELETE: cuBLAS holds the same library; never unload it under it.
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    s.failure_kind = DeviceProbe::Absence::no_driver_library;
    const char* why = dlerror();
    throw EnvironmentError(fmt::format("cannot load the CUDA driver library libcuda.so.1: {}",
                                       why != nullptr ? why : "unknown dlopen error"));
  }
#define LP_DRIVER_RESOLVE(name)                                                                 \
  {                                                                                             \
    void* symbol = dlsym(handle, LP_DRIVER_SYMBOL(name));                                       \
    if (symbol == nullptr) {                                                                    \
      throw EnvironmentError(fmt::format("the CUDA driver {} has no entry point {}: it is older " \
                                         "than the CUDA {}.{} headers loraprobe was built with",  \
                                         loaded_library_path(handle, "libcuda.so.1"), LP_DRIVER_SYMBOL(name),           \
                                         CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10));       \
    }                                                                                           \
    s.api.name = reinterpret_cast<decltype(s.api.name)>(symbol);                                \
  }
  LP_DRIVER_FUNCTIONS(LP_DRIVER_RESOLVE)
#undef LP_DRIVER_RESOLVE

  DriverStatus status;
  status.library = loaded_library_path(handle, "libcuda.so.1");
  status.jit_cache_allowed = allow_jit_cache;
  status.cache_disable_env = env_or_empty("CUDA_CACHE_DISABLE");
  status.module_loading_env = env_or_empty("CUDA_MODULE_LOADING");

  const CUresult init = s.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    s.api.cuGetErrorName(init, &name);
    s.api.cuGetErrorString(init, &text);
    s.failure_kind = init == CUDA_ERROR_NO_DEVICE ? DeviceProbe::Absence::no_device : DeviceProbe::Absence::init_error;
    throw EnvironmentError(fmt::format("cuInit(0) failed with {} ({}) using {}",
                                       name != nullptr ? name : "unknown error",
                                       text != nullptr ? text : "", status.library));
  }
  // From here on the driver works, so failures are ordinary checked calls; they
  // still end up as EnvironmentError below because the machine is unusable.
  s.loaded = &s.api;
  try {
    LP_CU_CHECK(s.api.cuDriverGetVersion(&status.driver_version));
    LP_CU_CHECK(s.api.cuDeviceGetCount(&status.device_count));
    CUmoduleLoadingMode mode{};
    LP_CU_CHECK(s.api.cuModuleGetLoadingMode(&mode));
    status.module_loading_mode = mode == CU_MODULE_LAZY_LOADING ? "lazy" : "eager";
  } catch (const CudaError& e) {
    s.loaded = nullptr;
    throw EnvironmentError(e.what());
  }
  return status;
}

}  // namespace

std::string loaded_library_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return fallback;
  }
  char resolved[PATH_MAX];
  if (realpath(map->l_name, resolved) != nullptr) {
    return resolved;
  }
  return map->l_name;
}

const DriverStatus& init_driver(bool allow_jit_cache) {
  DriverState& s = state();
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.attempted) {
    s.attempted = true;
    s.allow_jit_cache = allow_jit_cache;
    try {
      s.status = load_and_init(s, allow_jit_cache);
    } catch (const EnvironmentError& e) {
      s.failure = e.what();
      s.loaded = nullptr;
    }
  }
  if (!s.failure.empty()) {
    throw EnvironmentError(s.failure);
  }
  if (s.allow_jit_cache != allow_jit_cache) {
    throw Error(fmt::format("init_driver(allow_jit_cache={}) after the driver was already initialised "
                            "with allow_jit_cache={}: the driver reads CUDA_CACHE_DISABLE only once",
                            allow_jit_cache, s.allow_jit_cache));
  }
  return *s.status;
}

DeviceProbe probe_cuda_device() noexcept {
  using Absence = DeviceProbe::Absence;
  try {
    DriverState& s = state();
    bool allow = false;
    {
      const std::lock_guard<std::mutex> lock(s.mutex);
      allow = s.attempted ? s.allow_jit_cache : false;
    }
    try {
      const DriverStatus& status = init_driver(allow);
      if (status.device_count > 0) {
        return {};
      }
      return {Absence::no_device, fmt::format("the CUDA driver {} counts no device", status.library)};
    } catch (const EnvironmentError& e) {
      const std::lock_guard<std::mutex> lock(s.mutex);
      return {s.failure_kind, e.what()};
    }
  } catch (const std::exception& e) {
    return {Absence::init_error, e.what()};
  } catch (...) {
    return {Absence::init_error, "an exception that is no std::exception"};
  }
}

bool has_cuda_device() noexcept { return probe_cuda_device().present(); }

const DriverApi& driver() {
  const DriverApi* api = driver_if_loaded();
  if (api == nullptr) {
    throw Error("the CUDA driver was used before lp::init_driver() succeeded");
  }
  return *api;
}

const DriverApi* driver_if_loaded() noexcept {
  return state().loaded.load();
}

}  // namespace lp
