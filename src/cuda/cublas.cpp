#include "cuda/cublas.hpp"

#include <dlfcn.h>
#include <library_types.h>

#include <atomic>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"

namespace lp {

namespace {

struct CublasState {
  std::mutex mutex;
  CublasApi api;
  std::string failure;  ///< set when loading failed; rethrown by later calls
  std::atomic<const CublasApi*> loaded{nullptr};
};

CublasState& cublas_state() {
  static CublasState s;
  return s;
}

// Two-level stringification: the argument (cublasCreate -> cublasCreate_v2 in
// cublas_v2.h) is macro-expanded before # applies.
#define LP_CUBLAS_SYMBOL_IMPL(name) #name
#define LP_CUBLAS_SYMBOL(name) LP_CUBLAS_SYMBOL_IMPL(name)

// Where cuBLAS may be, in order: the library path's (LD_LIBRARY_PATH, ld.so.cache),
// the toolkit's that loraprobe was built with, then the nvidia-cublas wheel of the
// Python environment loraprobe was installed in (nvidia/cu13/lib, nvidia/cublas/lib).
// Each place is asked for the major loraprobe was built with first, then 12: every
// entry point used here has had the same signature since cuBLAS 12, and a vLLM
// environment of torch for CUDA 12 has only libcublas.so.12.
std::vector<std::string> cublas_candidates() {
  std::vector<std::string> sonames = {fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR)};
  if (CUBLAS_VER_MAJOR != 12) {
    sonames.emplace_back("libcublas.so.12");
  }
  std::vector<std::string> candidates;
  for (const std::string& soname : sonames) {
    candidates.push_back(soname);
    candidates.push_back(std::string(LP_CUDA_LIBRARY_DIR) + "/" + soname);
    for (const tools::ToolRoot& root : tools::python_nvidia_roots("lib/" + soname)) {
      candidates.push_back(root.root + "/lib/" + soname);
    }
  }
  return candidates;
}

void load(CublasState& s) {
  // RTLD_NODELETE: handles and streams may outlive any notion of unloading.
  void* handle = nullptr;
  std::string soname;
  std::vector<std::string> errors;
  for (const std::string& candidate : cublas_candidates()) {
    handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle != nullptr) {
      soname = candidate;
      break;
    }
    const char* error = dlerror();
    errors.push_back(error != nullptr ? error : candidate + ": unknown dlopen error");
  }
  if (handle == nullptr) {
    throw EnvironmentError(fmt::format("cannot load cuBLAS, which the reference needs (pip install nvidia-cublas, "
                                       "or put the toolkit's lib64 on LD_LIBRARY_PATH): {}",
                                       fmt::join(errors, "; ")));
  }
  auto resolve = [&](const char* symbol) {
    void* address = dlsym(handle, symbol);
    if (address == nullptr) {
      throw EnvironmentError(fmt::format("{} has no entry point {}: it is older than the cuBLAS {}.{} headers "
                                         "loraprobe was built with",
                                         soname, symbol, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR));
    }
    return address;
  };
#define LP_CUBLAS_RESOLVE(field, name) \
  s.api.field = reinterpret_cast<decltype(s.api.field)>(resolve(LP_CUBLAS_SYMBOL(name)));
  LP_CUBLAS_RESOLVE(create, cublasCreate)
  LP_CUBLAS_RESOLVE(destroy, cublasDestroy)
  LP_CUBLAS_RESOLVE(set_stream, cublasSetStream)
  LP_CUBLAS_RESOLVE(set_math_mode, cublasSetMathMode)
  LP_CUBLAS_RESOLVE(set_pointer_mode, cublasSetPointerMode)
  LP_CUBLAS_RESOLVE(gemm_ex, cublasGemmEx)
  LP_CUBLAS_RESOLVE(get_property, cublasGetProperty)
  LP_CUBLAS_RESOLVE(get_status_name, cublasGetStatusName)
  LP_CUBLAS_RESOLVE(get_status_string, cublasGetStatusString)
#undef LP_CUBLAS_RESOLVE
  s.api.library = loaded_library_path(handle, soname);
}

}  // namespace

const CublasApi& cublas_api() {
  CublasState& s = cublas_state();
  if (const CublasApi* api = s.loaded.load()) {
    return *api;
  }
  const std::lock_guard<std::mutex> lock(s.mutex);
  if (const CublasApi* api = s.loaded.load()) {
    return *api;
  }
  if (!s.failure.empty()) {
    throw EnvironmentError(s.failure);
  }
  try {
    load(s);
  } catch (const EnvironmentError& e) {
    s.failure = e.what();
    throw;
  }
  s.loaded = &s.api;
  return s.api;
}

const CublasApi* cublas_api_if_loaded() noexcept { return cublas_state().loaded.load(); }

CublasHandle::CublasHandle(const Stream& stream) : m_stream(stream.get()) {
  const CublasApi& api = cublas_api();
  LP_CUBLAS_CHECK(api.create(&m_handle));
  try {
    LP_CUBLAS_CHECK(api.set_stream(m_handle, m_stream));
    LP_CUBLAS_CHECK(api.set_math_mode(m_handle, CUBLAS_PEDANTIC_MATH));
    LP_CUBLAS_CHECK(api.set_pointer_mode(m_handle, CUBLAS_POINTER_MODE_HOST));
  } catch (...) {
    LP_CUBLAS_CHECK_NOEXCEPT(api.destroy(m_handle));
    m_handle = nullptr;
    throw;
  }
}

CublasHandle::~CublasHandle() {
  if (m_handle != nullptr) {
    LP_CUBLAS_CHECK_NOEXCEPT(cublas_api().destroy(m_handle));  // loaded: the handle came from it
  }
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_stream(std::exchange(other.m_stream, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  if (this != &other) {
    CublasHandle dying(std::move(*this));
    m_handle = std::exchange(other.m_handle, nullptr);
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

std::string cublas_library_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  const CublasApi& api = cublas_api();
  LP_CUBLAS_CHECK(api.get_property(MAJOR_VERSION, &major));
  LP_CUBLAS_CHECK(api.get_property(MINOR_VERSION, &minor));
  LP_CUBLAS_CHECK(api.get_property(PATCH_LEVEL, &patch));
  return fmt::format("{}.{}.{}", major, minor, patch);
}

std::string cublas_header_version() {
  return fmt::format("{}.{}.{}", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
}

}  // namespace lp
