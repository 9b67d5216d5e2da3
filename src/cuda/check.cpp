#include "cuda/check.hpp"

#include "cuda/cublas.hpp"

#include <cstdio>
#include <string_view>

#include <fmt/format.h>

#include "cuda/driver.hpp"

namespace lp {
namespace {

struct StickyCode {
  CUresult result;
  const char* name;
};

// The driver codes whose documentation in cuda.h says the process "must be
// terminated and relaunched", plus CUDA_ERROR_ASSERT ("the context cannot be used
// anymore") and CUDA_ERROR_ECC_UNCORRECTABLE (the data the context held is lost).
constexpr StickyCode k_sticky_codes[] = {
    {CUDA_ERROR_ECC_UNCORRECTABLE, "CUDA_ERROR_ECC_UNCORRECTABLE"},
    {CUDA_ERROR_CONTAINED, "CUDA_ERROR_CONTAINED"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT"},
    {CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT"},
    {CUDA_ERROR_HARDWARE_STACK_ERROR, "CUDA_ERROR_HARDWARE_STACK_ERROR"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION"},
    {CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS"},
    {CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE"},
    {CUDA_ERROR_INVALID_PC, "CUDA_ERROR_INVALID_PC"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED"},
    {CUDA_ERROR_TENSOR_MEMORY_LEAK, "CUDA_ERROR_TENSOR_MEMORY_LEAK"},
    {CUDA_ERROR_MPS_CLIENT_TERMINATED, "CUDA_ERROR_MPS_CLIENT_TERMINATED"},
    {CUDA_ERROR_EXTERNAL_DEVICE, "CUDA_ERROR_EXTERNAL_DEVICE"},
};

// StickyCudaError carries a CUresult for runtime errors too, by numeric value; that
// is only right while the two enums agree on every sticky code.
static_assert(static_cast<int>(cudaErrorECCUncorrectable) == CUDA_ERROR_ECC_UNCORRECTABLE);
static_assert(static_cast<int>(cudaErrorContained) == CUDA_ERROR_CONTAINED);
static_assert(static_cast<int>(cudaErrorIllegalAddress) == CUDA_ERROR_ILLEGAL_ADDRESS);
static_assert(static_cast<int>(cudaErrorLaunchTimeout) == CUDA_ERROR_LAUNCH_TIMEOUT);
static_assert(static_cast<int>(cudaErrorAssert) == CUDA_ERROR_ASSERT);
static_assert(static_cast<int>(cudaErrorHardwareStackError) == CUDA_ERROR_HARDWARE_STACK_ERROR);
static_assert(static_cast<int>(cudaErrorIllegalInstruction) == CUDA_ERROR_ILLEGAL_INSTRUCTION);
static_assert(static_cast<int>(cudaErrorMisalignedAddress) == CUDA_ERROR_MISALIGNED_ADDRESS);
static_assert(static_cast<int>(cudaErrorInvalidAddressSpace) == CUDA_ERROR_INVALID_ADDRESS_SPACE);
static_assert(static_cast<int>(cudaErrorInvalidPc) == CUDA_ERROR_INVALID_PC);
static_assert(static_cast<int>(cudaErrorLaunchFailure) == CUDA_ERROR_LAUNCH_FAILED);
static_assert(static_cast<int>(cudaErrorTensorMemoryLeak) == CUDA_ERROR_TENSOR_MEMORY_LEAK);
static_assert(static_cast<int>(cudaErrorMpsClientTerminated) == CUDA_ERROR_MPS_CLIENT_TERMINATED);
static_assert(static_cast<int>(cudaErrorExternalDevice) == CUDA_ERROR_EXTERNAL_DEVICE);

// __FILE__ is absolute; keep it from the last "src/" or "tests/" on, which is
// unambiguous inside the repository and short in a one-line message.
std::string_view short_file(const char* file) {
  const std::string_view path(file);
  for (const std::string_view root : {std::string_view("/src/"), std::string_view("/tests/")}) {
    const auto at = path.rfind(root);
    if (at != std::string_view::npos) {
      return path.substr(at + 1);
    }
  }
  return path;
}

std::string message(const char* api, const std::string& name, const std::string& text, const char* call,
                    const char* file, int line) {
  return fmt::format("{}:{}: {} call failed with {}{} in `{}`", short_file(file), line, api, name,
                     text.empty() ? std::string() : " (" + text + ")", call);
}

std::string cuda_error_name(cudaError_t error) {
  const char* name = cudaGetErrorName(error);
  return name != nullptr ? name : fmt::format("cudaError_t {}", static_cast<int>(error));
}

std::string cuda_error_string(cudaError_t error) {
  const char* text = cudaGetErrorString(error);
  return text != nullptr ? text : "";
}

// A status comes from a cuBLAS call, so cuBLAS is loaded already; if it cannot be
// loaded, the status is named by its number.
const CublasApi* cublas_for_text() noexcept {
  try {
    return &cublas_api();
  } catch (const EnvironmentError&) {  // cublas_api's only error: no loadable cuBLAS
    return nullptr;
  }
}

std::string cublas_status_name(cublasStatus_t status) {
  const CublasApi* api = cublas_for_text();
  const char* name = api != nullptr ? api->get_status_name(status) : nullptr;
  return name != nullptr ? name : fmt::format("cublasStatus_t {}", static_cast<int>(status));
}

std::string cublas_status_string(cublasStatus_t status) {
  const CublasApi* api = cublas_for_text();
  const char* text = api != nullptr ? api->get_status_string(status) : nullptr;
  return text != nullptr ? text : "";
}

void log_line(const std::string& what) noexcept {
  std::fprintf(stderr, "loraprobe: warning: %s (ignored: reported from a destructor)\n", what.c_str());
}

}  // namespace

bool is_sticky(CUresult result) noexcept { return sticky_error_name(result) != nullptr; }

bool is_sticky(cudaError_t error) noexcept { return is_sticky(static_cast<CUresult>(error)); }

const char* sticky_error_name(CUresult result) noexcept {
  for (const StickyCode& code : k_sticky_codes) {
    if (code.result == result) {
      return code.name;
    }
  }
  return nullptr;
}

std::string cu_result_name(CUresult result) noexcept {
  try {
    if (const DriverApi* drv = driver_if_loaded()) {
      const char* name = nullptr;
      if (drv->cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr) {
        return name;
      }
    }
    if (const char* name = sticky_error_name(result)) {
      return name;
    }
    return fmt::format("CUresult {}", static_cast<int>(result));
  } catch (...) {
    return "CUresult ?";  // allocation failed while formatting; nothing better to say
  }
}

std::string cu_result_string(CUresult result) noexcept {
  try {
    if (const DriverApi* drv = driver_if_loaded()) {
      const char* text = nullptr;
      if (drv->cuGetErrorString(result, &text) == CUDA_SUCCESS && text != nullptr) {
        return text;
      }
    }
  } catch (...) {
    // Out of memory while copying the text: fall through to "no description".
  }
  return "";
}

namespace detail {

void throw_cu_error(CUresult result, const char* call, const char* file, int line) {
  const std::string name = cu_result_name(result);
  const std::string what = message("CUDA driver", name, cu_result_string(result), call, file, line);
  if (is_sticky(result)) {
    throw StickyCudaError(CudaApi::driver, result, sticky_error_name(result), what);
  }
  throw CudaError(CudaApi::driver, static_cast<int>(result), name, what);
}

void throw_cuda_error(cudaError_t error, const char* call, const char* file, int line) {
  // Reset the runtime's last-error slot (a no-op for sticky errors, which stay).
  static_cast<void>(cudaGetLastError());
  const std::string name = cuda_error_name(error);
  const std::string what = message("CUDA runtime", name, cuda_error_string(error), call, file, line);
  if (is_sticky(error)) {
    const auto result = static_cast<CUresult>(error);
    throw StickyCudaError(CudaApi::runtime, result, sticky_error_name(result), what);
  }
  throw CudaError(CudaApi::runtime, static_cast<int>(error), name, what);
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  const std::string name = cublas_status_name(status);
  throw CudaError(CudaApi::cublas, static_cast<int>(status), name,
                  message("cuBLAS", name, cublas_status_string(status), call, file, line));
}

void log_cu_error(CUresult result, const char* call, const char* file, int line) noexcept {
  try {
    log_line(message("CUDA driver", cu_result_name(result), cu_result_string(result), call, file, line));
  } catch (...) {
    // Formatting itself failed (out of memory): a destructor has nothing left to report with.
  }
}

void log_cuda_error(cudaError_t error, const char* call, const char* file, int line) noexcept {
  try {
    static_cast<void>(cudaGetLastError());
    log_line(message("CUDA runtime", cuda_error_name(error), cuda_error_string(error), call, file, line));
  } catch (...) {
    // As above: out of memory while formatting.
  }
}

void log_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  try {
    log_line(message("cuBLAS", cublas_status_name(status), cublas_status_string(status), call, file, line));
  } catch (...) {
    // As above: out of memory while formatting.
  }
}

}  // namespace detail
}  // namespace lp
