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

void log_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  try {
    log_line(message("cuBLAS", cublas_status_name(status), cublas_status_string(status), call, file, line));
  } catch (...) {
    // As above: out of memory while formatting.
  }
}

}  // namespace detail
}  // namespace lp
